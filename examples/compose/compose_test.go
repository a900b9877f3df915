package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v2"
)

// root is the repository's root, where docker-compose.yml is.
const root = "../.."

// composeFile is what the tests read of docker-compose.yml.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Build       any               `yaml:"build"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Profiles []string `yaml:"profiles"`
}

// MustCompose reads and parses docker-compose.yml.
func MustCompose(tb testing.TB) composeFile {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		tb.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		tb.Fatalf("docker-compose.yml: %v", err)
	}
	return f
}

// mount is one bind mount of a compose service: a file of the repository
// seen inside the container.
type mount struct {
	source, target string
	readOnly       bool
}

// bindMounts returns s's volumes that mount a path of the repository (those
// whose source starts with "./"), keyed by their target.
func (s composeService) bindMounts(tb testing.TB) map[string]mount {
	tb.Helper()
	mounts := map[string]mount{}
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if !strings.HasPrefix(parts[0], "./") {
			continue
		}
		if len(parts) < 2 || len(parts) > 3 {
			tb.Fatalf("volume %q: want source:target[:ro]", v)
		}
		mounts[parts[1]] = mount{source: parts[0], target: parts[1], readOnly: len(parts) == 3 && parts[2] == "ro"}
	}
	return mounts
}

// issue 15.7: the lapse service declares its entities from files of the
// repository: every bind mount's source exists, read-only, and each entity
// variable names a mounted file.
func TestComposeLapseMountsTheExampleEntityFiles(t *testing.T) {
	lapse, ok := MustCompose(t).Services["lapse"]
	if !ok {
		t.Fatal("docker-compose.yml has no service lapse")
	}
	mounts := lapse.bindMounts(t)
	for _, m := range mounts {
		fi, err := os.Stat(filepath.Join(root, m.source))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("mount %s:%s: the source is not a file of the repository: %v", m.source, m.target, err)
		}
		if !m.readOnly {
			t.Errorf("mount %s:%s is not read-only (:ro)", m.source, m.target)
		}
	}
	want := map[string]string{
		"LAPSE_SERVICEBUS_CONFIG":    "./examples/config/Config.json",
		"LAPSE_RABBITMQ_DEFINITIONS": "./examples/config/definitions.json",
		"LAPSE_COSMOS_CONFIG":        "./examples/config/cosmos.json",
	}
	for env, source := range want {
		target := lapse.Environment[env]
		if m, ok := mounts[target]; !ok || m.source != source {
			t.Errorf("%s = %q: want the mount target of %s, mounts %v", env, target, source, mounts)
		}
	}
	if hosts := strings.Split(lapse.Environment["LAPSE_CERT_HOSTS"], ","); !slices.Contains(hosts, "lapse") {
		t.Errorf("LAPSE_CERT_HOSTS = %q: the certificate does not cover the service name", hosts)
	}
}

// issue 15.7: the example service waits until lapse is healthy, finds it by
// its service name, and builds from examples/compose.
func TestComposeAppDependsOnHealthyLapseByName(t *testing.T) {
	f := MustCompose(t)
	app, ok := f.Services["app"]
	if !ok {
		t.Fatal("docker-compose.yml has no service app")
	}
	if c := app.DependsOn["lapse"].Condition; c != "service_healthy" {
		t.Errorf("app depends_on lapse with condition %q, want service_healthy", c)
	}
	if len(f.Services["lapse"].Healthcheck.Test) == 0 {
		t.Error("lapse has no healthcheck for service_healthy to wait on")
	}
	if host := app.Environment["LAPSE_HOST"]; host != "lapse" {
		t.Errorf("app's LAPSE_HOST = %q, want the service name lapse", host)
	}
	build, _ := app.Build.(map[any]any)
	context, _ := build["context"].(string)
	dockerfile, _ := build["dockerfile"].(string)
	b, err := os.ReadFile(filepath.Join(root, context, dockerfile))
	if err != nil {
		t.Fatalf("app's build %v: %v", app.Build, err)
	}
	if !strings.Contains(string(b), " ./examples/compose\n") {
		t.Errorf("%s does not build ./examples/compose:\n%s", dockerfile, b)
	}
}

// issue 15.7: the build context leaves out what the images do not need.
func TestDockerignoreLeavesOutLocalFiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, want := range []string{".git", ".ci/artifacts", "**/node_modules", "lapse-data", "**/*.test", "/lapse"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore has no line %q", want)
		}
	}
	for _, l := range lines {
		if l == "examples" || strings.HasPrefix(l, "examples/") || l == "go.sum" {
			t.Errorf(".dockerignore leaves out %q, which an image builds from", l)
		}
	}
}
