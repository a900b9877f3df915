// Command collect-binaries copies the binaries of a GoReleaser run to the
// layout the npm and PyPI builders read: dist/bin/<goos>-<goarch>/lapse
// (lapse.exe on windows), and dist/bin/VERSION, the version GoReleaser
// stamped, on one line. It reads GoReleaser's dist/artifacts.json and
// dist/metadata.json, never its folder names, so the builders need not
// know GoReleaser's layout (docs/development.md, "Cutting a release").
//
//	go run ./packaging/collect-binaries [dist]
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// artifact is the part of an entry of dist/artifacts.json read here.
type artifact struct {
	Type   string `json:"type"`
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
}

// platforms are the six the builders expect, as goos-goarch.
var platforms = []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64", "windows-arm64"}

func main() {
	dist := "dist"
	if len(os.Args) > 1 {
		dist = os.Args[1]
	}
	if err := collect(dist); err != nil {
		fmt.Fprintln(os.Stderr, "collect-binaries:", err)
		os.Exit(1)
	}
}

func collect(dist string) error {
	var arts []artifact
	if err := readJSON(filepath.Join(dist, "artifacts.json"), &arts); err != nil {
		return err
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := readJSON(filepath.Join(dist, "metadata.json"), &meta); err != nil {
		return err
	}
	if meta.Version == "" {
		return fmt.Errorf("%s: no version", filepath.Join(dist, "metadata.json"))
	}
	bin := filepath.Join(dist, "bin")
	if err := os.RemoveAll(bin); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range arts {
		if a.Type != "Binary" {
			continue
		}
		platform := a.Goos + "-" + a.Goarch
		if !slices.Contains(platforms, platform) {
			return fmt.Errorf("artifacts.json: a binary for %s, not one of %v", platform, platforms)
		}
		if seen[platform] {
			return fmt.Errorf("artifacts.json: two binaries for %s", platform)
		}
		seen[platform] = true
		name := "lapse"
		if a.Goos == "windows" {
			name = "lapse.exe"
		}
		// artifacts.json's paths are relative to the folder GoReleaser
		// ran in, which holds dist.
		src := a.Path
		if !filepath.IsAbs(src) {
			src = filepath.Join(filepath.Dir(dist), src)
		}
		if err := copyFile(src, filepath.Join(bin, platform, name)); err != nil {
			return err
		}
	}
	for _, p := range platforms {
		if !seen[p] {
			return fmt.Errorf("artifacts.json: no binary for %s", p)
		}
	}
	return os.WriteFile(filepath.Join(bin, "VERSION"), []byte(meta.Version+"\n"), 0o644)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
