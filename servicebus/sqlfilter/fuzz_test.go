package sqlfilter

import (
	"testing"
	"unicode/utf8"

	"github.com/lapse-emulator/lapse/core"
)

// FuzzCompile feeds arbitrary text to Compile and CompileAction, and runs
// whatever compiles against a message: nothing may panic, and errors must
// be *core.Error values with the invalid code.
func FuzzCompile(f *testing.F) {
	for _, tc := range matchCases {
		f.Add(tc.expr)
	}
	for _, tc := range compileErrorCases {
		if len(tc.expr) < 200 {
			f.Add(tc.expr)
		}
	}
	for _, s := range []string{
		"SET quantity = quantity / 2; REMOVE priority;SET sys.CorrelationId = 'low';",
		"SET sys.Label = 'x' + newid()",
		"SET sys.TimeToLive = '00:01:00'; SET sys.ScheduledEnqueueTimeUtc = '2024-01-01'",
		"SET a = p('b') REMOVE c",
	} {
		f.Add(s)
	}
	check := func(t *testing.T, what, expr string, err error) {
		t.Helper()
		if err != nil && (core.ErrorCode(err) != core.EINVALID || err.Error() == "") {
			t.Fatalf("%s(%q): error %q with code %q", what, expr, err, core.ErrorCode(err))
		}
	}
	f.Fuzz(func(t *testing.T, expr string) {
		filter, err := Compile(expr, nil)
		check(t, "Compile", expr, err)
		if err == nil {
			if filter.String() != expr {
				t.Fatalf("String() = %q, want %q", filter.String(), expr)
			}
			_, err = filter.Match(sample())
			check(t, "Match", expr, err)
			_, err = filter.Match(&testMessage{})
			check(t, "Match", expr, err)
		}
		action, err := CompileAction(expr, nil)
		check(t, "CompileAction", expr, err)
		if err == nil {
			if utf8.RuneCountInString(expr) > MaxExpressionLength {
				t.Fatalf("CompileAction accepted %d characters", utf8.RuneCountInString(expr))
			}
			check(t, "Apply", expr, action.Apply(sample()))
			check(t, "Apply", expr, action.Apply(&testMessage{}))
		}
	})
}
