package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// issue 15.5: lapse serve with a cut-off or malformed --servicebus-config,
// --rabbitmq-definitions or --cosmos-config exits 1 with one line naming
// the file, the line and the column where it stops.
func TestConfigFileCutOffSaysFileLineAndColumn(t *testing.T) {
	for _, c := range []struct {
		flag, example string
		lines         int    // keep the example's first lines
		replace       string // then replace this...
		with          string // ...with this
		want          string // after "lapse: FILE:"
	}{
		{"--servicebus-config", "Config.json", 12, "", "", ""},
		{"--rabbitmq-definitions", "definitions.json", 8, "", "", ""},
		{"--cosmos-config", "cosmos.json", 5, `"/userId",`, `"/userId"`, `3:47: invalid character '"' after object key:value pair`},
	} {
		t.Run(strings.TrimPrefix(c.flag, "--"), func(t *testing.T) {
			orig, err := os.ReadFile(filepath.Join("..", "..", "examples", "config", c.example))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(orig), "\n")
			text := strings.Join(lines[:c.lines], "")
			if c.replace != "" {
				text = strings.Replace(text, c.replace, c.with, 1)
			}
			want := c.want
			if want == "" { // cut off: the position just after the last line kept
				last := strings.TrimRight(lines[c.lines-1], "\n")
				want = fmt.Sprintf("%d:%d: unexpected end of JSON input", c.lines, len(last)+1)
			}
			file := filepath.Join(t.TempDir(), c.example)
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), serveArgs(filepath.Join(t.TempDir(), "data"), c.flag, file), noEnv, &stdout, &stderr)
			// The log's lines of the listeners opened before may come first.
			lines = strings.SplitAfter(stderr.String(), "\n")
			last := lines[max(len(lines)-2, 0)]
			if wantErr := "lapse: " + file + ":" + want + "\n"; code != 1 || last != wantErr {
				t.Errorf("exit %d, stderr %q; want 1, last line %q", code, stderr.String(), wantErr)
			}
		})
	}
}
