package packaging

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/lapse-emulator/lapse/clienttest"
)

// MustReleaseDist returns $LAPSE_DIST, the folder of a GoReleaser run
// (.ci/run sets it after its "release snapshot" block), and the version
// that run stamped. Without it the test skips, or fails under CI.
func MustReleaseDist(tb testing.TB) (dist, version string) {
	tb.Helper()
	dist = os.Getenv("LAPSE_DIST")
	if dist == "" {
		clienttest.Need(tb, "LAPSE_DIST is not set: build the release with `.ci/bin/goreleaser release --snapshot --clean` (GoReleaser is pinned in tools/go.mod: `cd tools && go build -o ../.ci/bin/goreleaser github.com/goreleaser/goreleaser/v2`), then set LAPSE_DIST to the absolute path of dist/")
	}
	b, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		tb.Fatalf("LAPSE_DIST=%s is not a GoReleaser run: %v", dist, err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.Version == "" {
		tb.Fatalf("%s/metadata.json: no version (%v)", dist, err)
	}
	return dist, meta.Version
}

// releaseArchive is one archive of the release, and what its name says.
type releaseArchive struct {
	path, name   string
	goos, goarch string
}

// releasePlatforms are the six the release builds, goos/goarch.
var releasePlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// MustReleaseArchives returns the six archives of dist, one per platform,
// named lapse_<version>_<goos>_<goarch>, a zip for windows and a tar.gz
// for the others (.goreleaser.yaml).
func MustReleaseArchives(tb testing.TB, dist, version string) map[string]releaseArchive {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dist, "lapse_*"))
	if err != nil {
		tb.Fatal(err)
	}
	archives := map[string]releaseArchive{}
	for _, p := range names {
		base := filepath.Base(p)
		var rest, ext string
		var ok bool
		if rest, ok = strings.CutSuffix(base, ".tar.gz"); ok {
			ext = ".tar.gz"
		} else if rest, ok = strings.CutSuffix(base, ".zip"); ok {
			ext = ".zip"
		} else {
			continue // a build folder
		}
		platform, ok := strings.CutPrefix(rest, "lapse_"+version+"_")
		goos, goarch, ok2 := strings.Cut(platform, "_")
		if !ok || !ok2 || !slices.Contains(releasePlatforms, goos+"/"+goarch) {
			tb.Errorf("%s: not lapse_%s_<goos>_<goarch> of a platform the release builds", base, version)
			continue
		}
		if want := map[bool]string{true: ".zip", false: ".tar.gz"}[goos == "windows"]; ext != want {
			tb.Errorf("%s: a %s archive, want %s for %s", base, ext, want, goos)
		}
		archives[goos+"/"+goarch] = releaseArchive{path: p, name: base, goos: goos, goarch: goarch}
	}
	for _, pl := range releasePlatforms {
		if _, ok := archives[pl]; !ok {
			tb.Fatalf("%s: no archive for %s", dist, pl)
		}
	}
	return archives
}

// archiveFiles returns the regular files of a tar.gz or zip archive by
// name, with their contents.
func archiveFiles(path string) (map[string][]byte, error) {
	files := map[string][]byte{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			r, err := f.Open()
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			files[f.Name] = b
		}
		return files, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		files[h.Name] = b
	}
}

// binaryPlatform reads the goos/goarch a binary was built for from its
// header: ELF for linux, Mach-O for darwin, PE for windows.
func binaryPlatform(b []byte) (string, error) {
	r := bytes.NewReader(b)
	if f, err := elf.NewFile(r); err == nil {
		defer f.Close()
		if f.Type != elf.ET_EXEC {
			return "", fmt.Errorf("an ELF file of type %v, not an executable", f.Type)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return "", fmt.Errorf("an ELF executable with a program interpreter: not static")
			}
		}
		switch f.Machine {
		case elf.EM_X86_64:
			return "linux/amd64", nil
		case elf.EM_AARCH64:
			return "linux/arm64", nil
		}
		return "", fmt.Errorf("an ELF executable for %v", f.Machine)
	}
	if f, err := macho.NewFile(r); err == nil {
		defer f.Close()
		if f.Type != macho.TypeExec {
			return "", fmt.Errorf("a Mach-O file of type %v, not an executable", f.Type)
		}
		switch f.Cpu {
		case macho.CpuAmd64:
			return "darwin/amd64", nil
		case macho.CpuArm64:
			return "darwin/arm64", nil
		}
		return "", fmt.Errorf("a Mach-O executable for %v", f.Cpu)
	}
	if f, err := pe.NewFile(r); err == nil {
		defer f.Close()
		if f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			return "", fmt.Errorf("a PE file that is not an executable image")
		}
		switch f.Machine {
		case pe.IMAGE_FILE_MACHINE_AMD64:
			return "windows/amd64", nil
		case pe.IMAGE_FILE_MACHINE_ARM64:
			return "windows/arm64", nil
		}
		return "", fmt.Errorf("a PE executable for machine %#x", f.Machine)
	}
	return "", fmt.Errorf("neither ELF, Mach-O nor PE")
}

// readChecksums reads checksums.txt: "<sha256>  <file>" lines.
func readChecksums(tb testing.TB, path string) map[string]string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			tb.Fatalf("%s: line %q is not <sha256>  <file>", path, sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

// caskURL is a url of the Homebrew cask and the sha256 under it, with the
// platform its on_macos/on_linux and on_intel/on_arm blocks say.
type caskURL struct {
	url, sha256, platform string
}

// readCask reads the url and sha256 stanzas of a cask GoReleaser wrote,
// each under its on_<os> and on_<cpu> blocks, #{version} expanded.
func readCask(tb testing.TB, path string) (version string, urls []caskURL) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	quoted := regexp.MustCompile(`^(\w+) "([^"]*)"`)
	blockOS := map[string]string{"on_macos": "darwin", "on_linux": "linux"}
	blockArch := map[string]string{"on_intel": "amd64", "on_arm": "arm64"}
	var stack []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(line, " do"), strings.HasPrefix(line, "if "), strings.HasPrefix(line, "unless "):
			stack = append(stack, strings.Fields(line)[0])
			continue
		case line == "end":
			if len(stack) == 0 {
				tb.Fatalf("%s: an end without a block", path)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		m := quoted.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch m[1] {
		case "version":
			version = m[2]
		case "url":
			var goos, goarch string
			for _, s := range stack {
				goos, goarch = orElse(goos, blockOS[s]), orElse(goarch, blockArch[s])
			}
			urls = append(urls, caskURL{url: strings.ReplaceAll(m[2], "#{version}", version), platform: goos + "/" + goarch})
		case "sha256":
			if len(urls) == 0 || urls[len(urls)-1].sha256 != "" {
				tb.Fatalf("%s: sha256 %s follows no url", path, m[2])
			}
			urls[len(urls)-1].sha256 = m[2]
		}
	}
	return version, urls
}

// orElse returns b if it is set, else a.
func orElse(a, b string) string {
	if b != "" {
		return b
	}
	return a
}

// issue 30.1: each release archive holds README.md and one binary, whose
// header says the platform of the archive's name and which carries the
// version GoReleaser stamped; checksums.txt gives each archive's sha256;
// the Homebrew cask names the darwin and linux archives, each under its
// platform's blocks, with their sha256, and no windows one.
func TestIssue30_1_ArchivesHoldTheRightBinaries(t *testing.T) {
	dist, version := MustReleaseDist(t)
	archives := MustReleaseArchives(t, dist, version)
	sums := readChecksums(t, filepath.Join(dist, "checksums.txt"))
	for _, pl := range releasePlatforms {
		a := archives[pl]
		t.Run(a.goos+"_"+a.goarch, func(t *testing.T) {
			b, err := os.ReadFile(a.path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); sums[a.name] != got {
				t.Errorf("checksums.txt gives %s %q, the archive's sha256 is %s", a.name, sums[a.name], got)
			}
			files, err := archiveFiles(a.path)
			if err != nil {
				t.Fatalf("%s: %v", a.name, err)
			}
			if _, ok := files["README.md"]; !ok {
				t.Errorf("%s has no README.md: %v", a.name, slices.Sorted(maps.Keys(files)))
			}
			name := map[bool]string{true: "lapse.exe", false: "lapse"}[a.goos == "windows"]
			bin, ok := files[name]
			if !ok {
				t.Fatalf("%s has no %s: %v", a.name, name, slices.Sorted(maps.Keys(files)))
			}
			got, err := binaryPlatform(bin)
			if err != nil {
				t.Fatalf("%s in %s: %v", name, a.name, err)
			}
			if got != pl {
				t.Errorf("%s in %s is a %s binary, want %s", name, a.name, got, pl)
			}
			// -X main.version: the string is in the binary's data, even
			// stripped, on every platform (only linux/amd64 runs here).
			if !bytes.Contains(bin, []byte(version)) {
				t.Errorf("%s in %s does not hold the version %s", name, a.name, version)
			}
		})
	}
	for name := range sums {
		if _, err := os.Stat(filepath.Join(dist, name)); err != nil {
			t.Errorf("checksums.txt names %s: %v", name, err)
		}
	}

	casks, err := filepath.Glob(filepath.Join(dist, "homebrew", "Casks", "*.rb"))
	if err != nil || len(casks) != 1 {
		t.Fatalf("want one Homebrew cask in %s/homebrew/Casks, found %v (%v)", dist, casks, err)
	}
	caskVersion, urls := readCask(t, casks[0])
	if caskVersion != version {
		t.Errorf("the cask's version is %q, want %q", caskVersion, version)
	}
	named := map[string]bool{}
	for _, u := range urls {
		file := u.url[strings.LastIndex(u.url, "/")+1:]
		a, ok := archives[u.platform]
		switch {
		case !ok || strings.HasPrefix(u.platform, "windows/"):
			t.Errorf("the cask names %s under the blocks of %s, not a darwin or linux platform", u.url, u.platform)
		case file != a.name:
			t.Errorf("the cask names %s for %s, want the archive %s", u.url, u.platform, a.name)
		case u.sha256 != sums[a.name]:
			t.Errorf("the cask gives %s the sha256 %s, checksums.txt %s", a.name, u.sha256, sums[a.name])
		}
		named[u.platform] = true
	}
	for _, pl := range []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"} {
		if !named[pl] {
			t.Errorf("the cask has no url for %s: %v", pl, urls)
		}
	}
}

// issue 30.1: the linux/amd64 archive's binary, as a user unpacks it,
// prints the stamped version, serves on free ports and passes its own
// health check; stopped, it fails it.
func TestIssue30_1_LinuxAMD64Starts(t *testing.T) {
	dist, version := MustReleaseDist(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		clienttest.Need(t, "the linux/amd64 binary runs on linux/amd64 only, this is "+runtime.GOOS+"/"+runtime.GOARCH)
	}
	a := MustReleaseArchives(t, dist, version)["linux/amd64"]
	files, err := archiveFiles(a.path)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "lapse")
	if err := os.WriteFile(bin, files["lapse"], 0o755); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(bin, "version").Output()
	if want := "lapse " + version + " ("; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("lapse version: %v %q, want %q...", err, out, want)
	}

	lapse := mustServe(t, bin, filepath.Join(t.TempDir(), "data"))
	url := lapse.url
	healthcheck := func() error {
		out, err := exec.Command(bin, "healthcheck", "--control-url", url).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	if err := healthcheck(); err != nil {
		t.Errorf("lapse healthcheck --control-url %s: %v", url, err)
	}

	if err := lapse.stop(syscall.SIGTERM); err != nil {
		t.Errorf("lapse serve after SIGTERM: %v", err)
	}
	if err := healthcheck(); err == nil {
		t.Error("lapse healthcheck passed with lapse stopped")
	}
}
