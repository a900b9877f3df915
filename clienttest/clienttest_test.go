package clienttest

import "testing"

func TestLastLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "a\nb\n": "b", "x\n{\"k\":1}\n\n": `{"k":1}`} {
		if got := string(LastLine([]byte(in))); got != want {
			t.Errorf("LastLine(%q) = %q, want %q", in, got, want)
		}
	}
}
