package clienttest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFillReplacesEveryPlaceholder(t *testing.T) {
	src := filepath.Join(t.TempDir(), "prog.py")
	os.WriteFile(src, []byte(`CONN = "<CONN>"; Q = "<Q>"; again = "<Q>"`), 0o644)
	got, err := os.ReadFile(Fill(t, src, t.TempDir(), "<CONN>", "amqp://x", "<Q>", "jobs"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `CONN = "amqp://x"; Q = "jobs"; again = "jobs"`; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLastLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "a\nb\n": "b", "x\n{\"k\":1}\n\n": `{"k":1}`} {
		if got := string(LastLine([]byte(in))); got != want {
			t.Errorf("LastLine(%q) = %q, want %q", in, got, want)
		}
	}
}
