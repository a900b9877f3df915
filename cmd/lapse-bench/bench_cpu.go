package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// On two cores the client and the server share the machine, so a server's
// rate depends on the client's CPU as much as on its own. With
// --server-pid, the scenarios that time a load report the CPU time each
// side used per operation in that load: what part of a ratio the client
// and the machine bound.

// cpuUse is the CPU time (user and system) lapse-bench's process and the
// server's have used so far; server is -1 without --server-pid or when it
// cannot be read. switches is how many times the server's threads have
// been switched out of their CPU so far (voluntary and involuntary
// context switches, summed over /proc/PID/task), -1 when unknown: on a
// virtual machine a switch costs as much as a small request's own work,
// so a server that wakes a goroutine on another thread per request pays
// for it in CPU and in rate.
type cpuUse struct {
	client, server time.Duration
	switches       int64
}

// userHZ is the unit of /proc/PID/stat's times: Linux reports them in
// ticks of 1/100 s on every architecture, whatever the kernel's HZ.
const userHZ = 100

// readCPU reads the CPU time used so far by this process and by pid.
func readCPU(pid int) cpuUse {
	u := cpuUse{server: -1, switches: -1}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.client = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if pid > 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if d, err := parseStatCPU(string(b)); err == nil {
				u.server = d
			}
		}
		u.switches = readSwitches(pid)
	}
	return u
}

// readSwitches sums the context switches of pid's threads, -1 when none
// can be read.
func readSwitches(pid int) int64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	var sum int64 = -1
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		if n, ok := parseSwitches(string(b)); ok {
			sum = max(sum, 0) + n
		}
	}
	return sum
}

// parseSwitches returns the voluntary and involuntary context switches of
// a /proc/PID/task/TID/status file, summed.
func parseSwitches(status string) (int64, bool) {
	var sum int64
	found := 0
	for line := range strings.Lines(status) {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "voluntary_ctxt_switches" && name != "nonvoluntary_ctxt_switches") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, false
		}
		sum += n
		found++
	}
	return sum, found == 2
}

// parseStatCPU returns utime plus stime of a /proc/PID/stat line. The
// command name, in parentheses, may hold spaces and parentheses: the
// fields are counted from after its last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is the state, field 3; utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU time %q: %v", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// cpuPerOp sets r's CPU figures from the use between from and to over n
// operations, and says them in its notes; nothing when the server's was
// not read.
func (r *benchResult) cpuPerOp(from, to cpuUse, n int) {
	if from.server < 0 || to.server < 0 || n <= 0 {
		return
	}
	per := func(d time.Duration) *float64 {
		us := float64(d) / float64(time.Microsecond) / float64(n)
		return &us
	}
	r.ClientCPU, r.ServerCPU = per(to.client-from.client), per(to.server-from.server)
	r.Notes = strings.TrimPrefix(fmt.Sprintf("%s; CPU per op: client %.0f µs, server %.0f µs",
		r.Notes, *r.ClientCPU, *r.ServerCPU), "; ")
	if from.switches >= 0 && to.switches >= 0 {
		sw := float64(to.switches-from.switches) / float64(n)
		r.ServerSwitches = &sw
		r.Notes += fmt.Sprintf(", server thread switches per op %.2f", sw)
	}
}
