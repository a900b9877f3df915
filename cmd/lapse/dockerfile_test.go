package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dockerfile is what the image test reads of the repository's Dockerfile:
// its stages and their instructions, so that the test builds and runs the
// binary as the Dockerfile says and the two cannot drift apart.
type dockerfile struct {
	stages []dockerStage
}

// dockerStage is one FROM of a Dockerfile and the instructions under it.
type dockerStage struct {
	from, name string
	platform   string // FROM's --platform, as written
	instrs     []dockerInstr
}

// dockerInstr is one instruction: its keyword in upper case and the rest
// of its line, continuation lines joined.
type dockerInstr struct {
	cmd, args string
}

// MustDockerfile reads and parses the Dockerfile at path.
func MustDockerfile(tb testing.TB, path string) dockerfile {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var df dockerfile
	var line strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || text == "" && line.Len() == 0 {
			continue
		}
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			line.WriteString(cont)
			continue
		}
		line.WriteString(text)
		cmd, args, _ := strings.Cut(strings.TrimSpace(line.String()), " ")
		line.Reset()
		in := dockerInstr{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			st := dockerStage{}
			words := strings.Fields(in.args)
			for len(words) > 1 && strings.HasPrefix(words[0], "--") {
				if p, ok := strings.CutPrefix(words[0], "--platform="); ok {
					st.platform = p
				}
				words = words[1:]
			}
			st.from = words[0]
			if len(words) == 3 && strings.EqualFold(words[1], "AS") {
				st.name = words[2]
			}
			df.stages = append(df.stages, st)
			continue
		}
		if len(df.stages) == 0 {
			tb.Fatalf("%s: %s before FROM", path, in.cmd)
		}
		df.stages[len(df.stages)-1].instrs = append(df.stages[len(df.stages)-1].instrs, in)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(df.stages) == 0 {
		tb.Fatalf("%s: no FROM", path)
	}
	return df
}

// stage returns the stage named name ("" for the last one, the image).
func (df dockerfile) stage(tb testing.TB, name string) dockerStage {
	tb.Helper()
	if name == "" {
		return df.stages[len(df.stages)-1]
	}
	for _, st := range df.stages {
		if st.name == name {
			return st
		}
	}
	tb.Fatalf("Dockerfile: no stage %q", name)
	return dockerStage{}
}

// all returns the arguments of every instruction cmd of the stage.
func (st dockerStage) all(cmd string) []string {
	var args []string
	for _, in := range st.instrs {
		if in.cmd == cmd {
			args = append(args, in.args)
		}
	}
	return args
}

// one returns the arguments of the stage's one instruction cmd.
func (st dockerStage) one(tb testing.TB, cmd string) string {
	tb.Helper()
	args := st.all(cmd)
	if len(args) != 1 {
		tb.Fatalf("Dockerfile stage %q: %d %s instructions, want 1", st.name, len(args), cmd)
	}
	return args[0]
}

// execForm decodes the exec form of ENTRYPOINT, CMD or HEALTHCHECK's CMD: a
// JSON array of strings. The image has no shell for the other form.
func execForm(tb testing.TB, what, args string) []string {
	tb.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil || len(argv) == 0 {
		tb.Fatalf("Dockerfile %s %s: want the exec form, a JSON array (scratch has no shell): %v", what, args, err)
	}
	return argv
}

// env returns the stage's ENV variables as KEY=VALUE, in order.
func (st dockerStage) env(tb testing.TB) []string {
	tb.Helper()
	var env []string
	for _, args := range st.all("ENV") {
		if k, v, ok := strings.Cut(args, " "); ok && !strings.Contains(k, "=") {
			env = append(env, k+"="+strings.TrimSpace(v)) // ENV KEY VALUE
			continue
		}
		words, err := shellWords(args, nil)
		if err != nil {
			tb.Fatalf("Dockerfile ENV %s: %v", args, err)
		}
		env = append(env, words...)
	}
	return env
}

// user returns the uid and gid of the stage's USER uid:gid.
func (st dockerStage) user(tb testing.TB) (uid, gid uint32) {
	tb.Helper()
	u, g, ok := strings.Cut(st.one(tb, "USER"), ":")
	uid64, err1 := strconv.ParseUint(u, 10, 32)
	gid64, err2 := strconv.ParseUint(g, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		tb.Fatalf("Dockerfile USER %q: want uid:gid in numbers (scratch has no /etc/passwd)", st.one(tb, "USER"))
	}
	return uint32(uid64), uint32(gid64)
}

// dockerCopy is a COPY --from of the image stage.
type dockerCopy struct {
	from, src, dst, chown string
}

// copies returns the stage's COPY --from instructions.
func (st dockerStage) copies(tb testing.TB) []dockerCopy {
	tb.Helper()
	var cps []dockerCopy
	for _, args := range st.all("COPY") {
		var c dockerCopy
		var rest []string
		for _, w := range strings.Fields(args) {
			switch {
			case strings.HasPrefix(w, "--from="):
				c.from = strings.TrimPrefix(w, "--from=")
			case strings.HasPrefix(w, "--chown="):
				c.chown = strings.TrimPrefix(w, "--chown=")
			default:
				rest = append(rest, w)
			}
		}
		if c.from == "" || len(rest) != 2 {
			tb.Fatalf("Dockerfile COPY %s: want COPY --from=stage src dst", args)
		}
		c.src, c.dst = rest[0], rest[1]
		cps = append(cps, c)
	}
	return cps
}

// goBuild returns the `go build` command of the build stage's RUN, split
// into its environment assignments and its arguments, with the stage's ARG
// defaults (or args) expanded. As in Docker, a build argument reaches RUN
// only through an ARG of the stage (one ARG may declare several), and an
// ARG without a default and not given is empty; buildx gives TARGETOS and
// TARGETARCH the platform being built.
func (st dockerStage) goBuild(tb testing.TB, buildArgs map[string]string) (env, argv []string, run string) {
	tb.Helper()
	vars := map[string]string{}
	for _, a := range st.all("ARG") {
		for _, decl := range strings.Fields(a) {
			k, v, _ := strings.Cut(decl, "=")
			if given, ok := buildArgs[k]; ok {
				v = given
			}
			vars[k] = v
		}
	}
	for _, run := range st.all("RUN") {
		for _, part := range strings.Split(run, "&&") {
			words, err := shellWords(strings.TrimSpace(part), vars)
			if err != nil {
				tb.Fatalf("Dockerfile RUN %s: %v", run, err)
			}
			i := 0
			for i < len(words) && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-") {
				i++
			}
			if len(words) > i+1 && words[i] == "go" && words[i+1] == "build" {
				return words[:i], words[i:], run
			}
		}
	}
	tb.Fatal("Dockerfile: no RUN with go build")
	return nil, nil, ""
}

// MustDockerGoBuild runs the build stage's go build line as written, with
// buildArgs, in the repository (WORKDIR /src after COPY . .), its binary
// written to bin instead of its -o; it returns the -o the Dockerfile says
// and the RUN line.
func MustDockerGoBuild(tb testing.TB, build dockerStage, buildArgs map[string]string, bin string) (out, run string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds the image's binary")
	}
	env, argv, run := build.goBuild(tb, buildArgs)
	for i, a := range argv {
		if a == "-o" && i+1 < len(argv) {
			out = argv[i+1]
			argv[i+1] = bin
		}
	}
	if out == "" {
		tb.Fatalf("Dockerfile's go build %v has no -o", argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s %s: %v\n%s", strings.Join(env, " "), strings.Join(argv, " "), err, b)
	}
	return out, run
}

// elfMachines is the ELF machine of each GOARCH the image is built for.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// mustELFMachine reads the machine of the static ELF executable at path.
func mustELFMachine(tb testing.TB, path string) elf.Machine {
	tb.Helper()
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatalf("%s: not an ELF file: %v", path, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		tb.Errorf("%s: ELF type %v, want an executable", path, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			tb.Errorf("%s asks for a program interpreter: not static, scratch has no libc", path)
		}
	}
	return f.Machine
}

// issue 30.2: the image is built for linux/amd64 and linux/arm64 without
// emulation: the build stage runs on the builder's platform
// (--platform=$BUILDPLATFORM) and its go build line cross-compiles for the
// one buildx gives as TARGETOS and TARGETARCH. Run here as written, with
// TARGETARCH=arm64, it makes an arm64 binary (the amd64 one is the one
// TestImageServesEveryProtocolFromAnEmptyRoot runs).
func TestIssue30_2_DockerfileCrossCompilesForTheTargetPlatform(t *testing.T) {
	df := MustDockerfile(t, filepath.Join("..", "..", "Dockerfile"))
	build := df.stage(t, "build")
	if build.platform != "$BUILDPLATFORM" {
		t.Errorf("the build stage is FROM --platform=%q %s: want --platform=$BUILDPLATFORM, or buildx runs go under emulation for arm64", build.platform, build.from)
	}
	bin := filepath.Join(t.TempDir(), "lapse")
	MustDockerGoBuild(t, build, map[string]string{"VERSION": "v1.2.3", "TARGETOS": "linux", "TARGETARCH": "arm64"}, bin)
	if got := mustELFMachine(t, bin); got != elf.EM_AARCH64 {
		t.Errorf("the Dockerfile's go build with TARGETOS=linux TARGETARCH=arm64 made a binary for %v, want %v", got, elf.EM_AARCH64)
	}
}

// shellWords splits s into words as a POSIX shell does for the simple
// commands of a Dockerfile: blanks separate words, double and single quotes
// group, ${NAME} and $NAME expand from vars outside single quotes.
func shellWords(s string, vars map[string]string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated '")
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '$' {
					n, val, err := expand(s[j:], vars)
					if err != nil {
						return nil, err
					}
					w.WriteString(val)
					j += n - 1
					continue
				}
				w.WriteByte(s[j])
			}
			if j == len(s) {
				return nil, fmt.Errorf(`unterminated "`)
			}
			i = j
			inWord = true
		case c == '$':
			n, val, err := expand(s[i:], vars)
			if err != nil {
				return nil, err
			}
			w.WriteString(val)
			i += n - 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// expand reads the variable reference at the start of s ($NAME or ${NAME})
// and returns its length and value; an unknown name is an error.
func expand(s string, vars map[string]string) (int, string, error) {
	var name string
	n := 0
	if strings.HasPrefix(s, "${") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return 0, "", fmt.Errorf("unterminated ${")
		}
		name, n = s[2:end], end+1
	} else {
		n = 1
		for n < len(s) && (s[n] == '_' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= '0' && s[n] <= '9') {
			n++
		}
		name = s[1:n]
	}
	v, ok := vars[name]
	if !ok {
		return 0, "", fmt.Errorf("$%s is not an ARG of the stage", name)
	}
	return n, v, nil
}

// issue 15.8: the Dockerfile as the image test reads it: the build's go
// version is go.mod's, the binary is static, and the image runs the exec
// forms of its entry point and health check.
func TestDockerfileBuildsAStaticBinaryWithGoModsGo(t *testing.T) {
	df := MustDockerfile(t, filepath.Join("..", "..", "Dockerfile"))
	build := df.stage(t, "build")
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var goVersion string
	for _, l := range strings.Split(string(mod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goVersion = v
		}
	}
	if image, tag, _ := strings.Cut(build.from, ":"); image != "golang" || !strings.HasPrefix(goVersion+".", tag+".") {
		t.Errorf("Dockerfile builds FROM %s; go.mod says go %s", build.from, goVersion)
	}
	env, argv, _ := build.goBuild(t, map[string]string{"VERSION": "v1.2.3"})
	if !slices.Contains(env, "CGO_ENABLED=0") {
		t.Errorf("go build runs with %v: want CGO_ENABLED=0, a static binary for scratch", env)
	}
	if !slices.Contains(argv, "-trimpath") || !slices.Contains(argv, "-s -w -X main.version=v1.2.3") {
		t.Errorf("go build %v: want -trimpath and -ldflags \"-s -w -X main.version=${VERSION}\"", argv)
	}
	image := df.stage(t, "")
	if image.from != "scratch" {
		t.Errorf("the image is FROM %s, want scratch", image.from)
	}
	_ = execForm(t, "ENTRYPOINT", image.one(t, "ENTRYPOINT"))
	_ = execForm(t, "CMD", image.one(t, "CMD"))
	_, hc, ok := strings.Cut(image.one(t, "HEALTHCHECK"), "CMD ")
	if !ok {
		t.Fatalf("HEALTHCHECK %s: no CMD", image.one(t, "HEALTHCHECK"))
	}
	_ = execForm(t, "HEALTHCHECK CMD", hc)
}

func TestShellWords(t *testing.T) {
	got, err := shellWords(`CGO_ENABLED=0 go build -ldflags "-s -w -X main.version=${VERSION}" -o '/out/$x' $A/b`, map[string]string{"VERSION": "dev", "A": "a"})
	want := []string{"CGO_ENABLED=0", "go", "build", "-ldflags", "-s -w -X main.version=dev", "-o", "/out/$x", "a/b"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("shellWords = %q, %v; want %q", got, err, want)
	}
	if _, err := shellWords(`echo ${NOPE}`, nil); err == nil {
		t.Error("an unknown variable expanded")
	}
}
