package main

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       time.Duration
		err        bool
	}{
		{"Plain", "4242 (lapse) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 12 0 5000 0 0", 2810 * time.Millisecond, false},
		// A command name may hold spaces and parentheses.
		{"OddName", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", 70 * time.Millisecond, false},
		{"NoName", "4242 lapse S 1", 0, true},
		{"Short", "4242 (lapse) S 1 4242", 0, true},
		{"NotANumber", "4242 (lapse) S 1 4242 4242 0 -1 4194560 100 0 0 0 x 31", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU(tc.stat)
			if (err != nil) != tc.err || got != tc.want {
				t.Errorf("parseStatCPU(%q) = %v, %v; want %v, error %v", tc.stat, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestCPUPerOp(t *testing.T) {
	from := cpuUse{client: time.Second, server: 2 * time.Second, switches: -1}
	to := cpuUse{client: 1500 * time.Millisecond, server: 3 * time.Second, switches: -1}
	r := benchResult{Notes: "CreateItem"}
	r.cpuPerOp(from, to, 1000)
	if r.ClientCPU == nil || *r.ClientCPU != 500 || r.ServerCPU == nil || *r.ServerCPU != 1000 ||
		r.Notes != "CreateItem; CPU per op: client 500 µs, server 1000 µs" {
		t.Errorf("got %+v (client %v, server %v)", r, r.ClientCPU, r.ServerCPU)
	}
	// Without the server's figure, nothing is said.
	r = benchResult{Notes: "CreateItem"}
	r.cpuPerOp(cpuUse{server: -1}, to, 1000)
	if r.ClientCPU != nil || r.ServerCPU != nil || r.Notes != "CreateItem" {
		t.Errorf("without the server's CPU: %+v", r)
	}
}

func TestCPUPerOpSaysTheServersThreadSwitches(t *testing.T) {
	from := cpuUse{client: time.Second, server: 2 * time.Second, switches: 100}
	to := cpuUse{client: 1500 * time.Millisecond, server: 3 * time.Second, switches: 7600}
	r := benchResult{Notes: "CreateItem"}
	r.cpuPerOp(from, to, 1000)
	if r.ServerSwitches == nil || *r.ServerSwitches != 7.5 ||
		r.Notes != "CreateItem; CPU per op: client 500 µs, server 1000 µs, server thread switches per op 7.50" {
		t.Errorf("got %+v (switches %v)", r, r.ServerSwitches)
	}
}

func TestParseSwitches(t *testing.T) {
	status := "Name:\tlapse\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t1200\nnonvoluntary_ctxt_switches:\t34\n"
	if n, ok := parseSwitches(status); !ok || n != 1234 {
		t.Errorf("parseSwitches = %d, %v; want 1234, true", n, ok)
	}
	if _, ok := parseSwitches("Name:\tlapse\nvoluntary_ctxt_switches:\t1200\n"); ok {
		t.Error("parseSwitches took a status without its involuntary switches")
	}
	if _, ok := parseSwitches("voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t1\n"); ok {
		t.Error("parseSwitches took a count that is not a number")
	}
}

// The switches of a live process are read: this test's own.
func TestReadSwitchesOfThisProcess(t *testing.T) {
	if n := readSwitches(os.Getpid()); n < 0 {
		t.Errorf("readSwitches of this process = %d", n)
	}
	if n := readSwitches(-5); n != -1 {
		t.Errorf("readSwitches of no process = %d, want -1", n)
	}
}
