//go:build linux

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// repoRoot is the repository's root, the Dockerfile's build context.
var repoRoot = filepath.Join("..", "..")

// scratchImage is the image of the Dockerfile, built and laid out in a
// folder as Docker would lay out its root file system.
type scratchImage struct {
	root       string   // the root file system: only what the Dockerfile copies
	uid, gid   uint32   // USER
	env        []string // ENV, after what Docker sets for every container
	entrypoint []string // ENTRYPOINT followed by CMD
	health     []string // HEALTHCHECK's CMD
	expose     []string // EXPOSE
}

// MustScratchImage builds the binary with the Dockerfile's own go build
// command (its VERSION build argument set to version) and lays out the
// image's root as the Dockerfile's scratch stage copies it.
func MustScratchImage(t *testing.T, version string) *scratchImage {
	t.Helper()
	df := MustDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	build, final := df.stage(t, "build"), df.stage(t, "")
	if final.from != "scratch" {
		t.Fatalf("the image is FROM %s, not scratch", final.from)
	}
	// The root, and a folder beside it for the build's output; not
	// t.TempDir, whose folders only root can enter.
	base, err := os.MkdirTemp("", "lapse-image-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root := filepath.Join(base, "root")
	for _, d := range []string{base, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	// The platform buildx builds for: this machine's, whose binary runs
	// here (linux/amd64 in CI); TestIssue30_2_DockerfileCrossCompiles
	// checks the arm64 one's header.
	out, run := MustDockerGoBuild(t, build, map[string]string{"VERSION": version, "TARGETOS": "linux", "TARGETARCH": runtime.GOARCH}, filepath.Join(base, "out"))
	if got := mustELFMachine(t, filepath.Join(base, "out")); got != elfMachines[runtime.GOARCH] {
		t.Fatalf("the Dockerfile's go build with TARGETARCH=%s made a binary for %v", runtime.GOARCH, got)
	}

	// COPY --from=build: the binary, and the folders the RUN made (mode
	// 1777 where it says chmod 1777), owned as --chown says.
	for _, c := range final.copies(t) {
		if c.from != build.name {
			t.Fatalf("COPY --from=%s: not the build stage", c.from)
		}
		dst := filepath.Join(root, c.dst)
		if c.src == out {
			b, err := os.ReadFile(filepath.Join(base, "out"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o755); err != nil {
				t.Fatal(err)
			}
		} else {
			if !strings.Contains(run, "mkdir -p") || !strings.Contains(run, c.src) {
				t.Fatalf("COPY %s: the build's RUN does not make it: %s", c.src, run)
			}
			mode := os.FileMode(0o755)
			if strings.Contains(run, "chmod 1777 "+c.src) {
				mode = 0o777 | os.ModeSticky
			}
			if err := os.Mkdir(dst, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dst, mode); err != nil {
				t.Fatal(err)
			}
		}
		if c.chown != "" {
			u, g, _ := strings.Cut(c.chown, ":")
			uid, err1 := strconv.Atoi(u)
			gid, err2 := strconv.Atoi(g)
			if err1 != nil || err2 != nil {
				t.Fatalf("COPY --chown=%s: want uid:gid in numbers", c.chown)
			}
			if err := os.Chown(dst, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}

	img := &scratchImage{root: root}
	img.uid, img.gid = final.user(t)
	// What Docker sets in every container, then the image's ENV.
	img.env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME=lapse", "HOME=/"}, final.env(t)...)
	img.entrypoint = append(execForm(t, "ENTRYPOINT", final.one(t, "ENTRYPOINT")), execForm(t, "CMD", final.one(t, "CMD"))...)
	_, hc, _ := strings.Cut(final.one(t, "HEALTHCHECK"), "CMD ")
	img.health = execForm(t, "HEALTHCHECK CMD", hc)
	for _, e := range final.all("EXPOSE") {
		img.expose = append(img.expose, strings.Fields(e)...)
	}
	return img
}

// command returns a command that runs argv in the image's root as the
// image's user, with the image's environment and more, as `docker run`
// does: chroot, uid and gid, no supplementary groups, working folder /.
func (img *scratchImage) command(ctx context.Context, more []string, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append([]string{}, img.env...), more...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     img.root,
		Credential: &syscall.Credential{Uid: img.uid, Gid: img.gid, Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL, // if the test dies, so does lapse
	}
	return cmd
}

// MustScratchNet makes a network namespace for the image's processes, or
// skips the test where that cannot be done (not root; not Linux is a
// build tag), except under CI.
func MustScratchNet(t *testing.T) *scratchNet {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the image's binary")
	}
	if os.Geteuid() != 0 {
		clienttest.Need(t, "the scratch-like run needs root for chroot and a network namespace")
	}
	n, err := newScratchNet()
	if err != nil {
		clienttest.Need(t, "no network namespace of its own for the scratch-like run: "+err.Error())
	}
	t.Cleanup(n.close)
	return n
}

// lockedBuffer is a bytes.Buffer that a process's output is copied into
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// healthcheck runs the image's HEALTHCHECK command in its root and
// namespace, with Docker's timeout of 3 s, and returns its output and error.
func (img *scratchImage) healthcheck(n *scratchNet) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := img.command(ctx, nil, img.health...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := n.start(cmd); err != nil {
		return "", err
	}
	err := cmd.Wait()
	return out.String(), err
}

// issue 15.8: the image checked without a Docker engine. The binary is
// built by the Dockerfile's own go build line and runs as scratch would
// run it: in a root holding only what the Dockerfile copies (no libc, no
// /etc, no shell), as uid and gid 65532, in a network namespace of its own,
// with the image's ENV, ENTRYPOINT and CMD, and the entity files of
// docker-compose.yml under /config. The HEALTHCHECK command, run in the
// same root, says healthy; each protocol works through its exposed port;
// SIGTERM (docker stop) stops it cleanly; then the health check fails.
func TestImageServesEveryProtocolFromAnEmptyRoot(t *testing.T) {
	n := MustScratchNet(t)
	img := MustScratchImage(t, "image-test")

	// Static: no program interpreter, no shared library.
	bin := filepath.Join(img.root, img.entrypoint[0])
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a program interpreter: not static, scratch has no libc", img.entrypoint[0])
		}
	}
	f.Close()
	if len(libs) > 0 {
		t.Errorf("%s needs %v: not static", img.entrypoint[0], libs)
	}

	// docker-compose.yml's entity files, mounted read-only under /config.
	config := filepath.Join(img.root, "config")
	if err := os.Mkdir(config, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Config.json", "definitions.json", "cosmos.json"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "config", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(config, name), b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	composeEnv := []string{"LAPSE_SERVICEBUS_CONFIG=/config/Config.json", "LAPSE_RABBITMQ_DEFINITIONS=/config/definitions.json", "LAPSE_COSMOS_CONFIG=/config/cosmos.json"}

	if out, err := img.command(t.Context(), nil, img.entrypoint[0], "version").Output(); err != nil || !strings.HasPrefix(string(out), "lapse image-test ") {
		t.Errorf("lapse version in the image: %v %q, want the VERSION build argument", err, out)
	}

	lapse := img.command(context.Background(), composeEnv, img.entrypoint...)
	var stderr lockedBuffer
	lapse.Stdout, lapse.Stderr = &stderr, &stderr
	if err := n.start(lapse); err != nil {
		t.Fatalf("start %v in the image's root: %v", img.entrypoint, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- lapse.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = lapse.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("lapse's output:\n%s", stderr.String())
		}
	})

	// Healthy within the HEALTHCHECK's retries (here every 100 ms).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err := img.healthcheck(n)
		if err == nil {
			break
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("lapse exited in the image's root: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: still failing after 30 s: %v %s", img.health, err, out)
		}
	}

	ports := map[string]string{} // exposed port -> address that reaches it
	for _, p := range img.expose {
		ports[p] = n.forward(t, p)
	}
	for _, p := range []string{"5672", "5671", "8081", "5300", "15672", "8080"} {
		if ports[p] == "" {
			t.Fatalf("the Dockerfile does not EXPOSE %s: %v", p, img.expose)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	t.Run("Certificate", func(t *testing.T) { imageCertificate(ctx, t, ports) })
	t.Run("ServiceBus", func(t *testing.T) { imageServiceBus(ctx, t, ports["5672"]) })
	t.Run("RabbitMQ", func(t *testing.T) { imageRabbitMQ(ctx, t, ports["5672"]) })
	t.Run("Cosmos", func(t *testing.T) { imageCosmos(ctx, t, ports["8081"], ports["8080"]) })
	t.Run("Management", func(t *testing.T) { imageManagement(ctx, t, ports["5300"], ports["15672"]) })

	// docker stop: SIGTERM, then at most 10 s before SIGKILL.
	if err := lapse.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("lapse after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lapse did not stop within docker stop's 10 s")
	}
	// The data went to the volume, owned by the image's user.
	fi, err := os.Stat(filepath.Join(img.root, "data", "lapse.db"))
	if err != nil {
		t.Fatalf("no database in /data: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != img.uid || st.Gid != img.gid {
		t.Errorf("/data/lapse.db is owned by %d:%d, want %d:%d", st.Uid, st.Gid, img.uid, img.gid)
	}
	if out, err := img.healthcheck(n); err == nil {
		t.Errorf("the health check of a stopped lapse succeeded: %s", out)
	}
}

// issue 15.8: the empty root is empty: a program that needs libc does not
// start in it, so the static binary's start above proves something.
func TestImageRootHasNoLibc(t *testing.T) {
	n := MustScratchNet(t)
	dynamic := ""
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if f, err := elf.Open(p); err == nil {
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP {
					dynamic = p
				}
			}
			f.Close()
		}
		if dynamic != "" {
			break
		}
	}
	if dynamic == "" {
		t.Skip("no dynamically linked true to try")
	}
	root, err := os.MkdirTemp("", "lapse-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	_ = os.Chmod(root, 0o755)
	b, err := os.ReadFile(dynamic)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "true"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	img := &scratchImage{root: root, uid: 65532, gid: 65532}
	cmd := img.command(t.Context(), nil, "/true")
	err = n.start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err == nil {
		t.Errorf("%s, which needs libc, ran in an empty root", dynamic)
	}
}
