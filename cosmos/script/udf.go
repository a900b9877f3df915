package script

import (
	"github.com/dop251/goja"
)

// Functions are user-defined functions ready to be called, for one query:
// one sandbox, not safe for concurrent use.
type Functions struct {
	r   *Runner
	sb  *sandbox
	fns map[string]goja.Callable
}

// Functions compiles the user-defined functions of srcs (by name) into
// one sandbox. A function that does not compile is an *Error of kind
// Syntax, when it is called.
func (r *Runner) Functions(srcs map[string]string) (*Functions, error) {
	sb, err := r.newSandbox(nil, "", "")
	if err != nil {
		return nil, err
	}
	f := &Functions{r: r, sb: sb, fns: map[string]goja.Callable{}}
	for name, src := range srcs {
		prog, err := r.compile(src)
		if err != nil {
			return nil, err
		}
		v, err := f.guard(func() (goja.Value, error) { return sb.vm.RunProgram(prog) })
		if err != nil {
			return nil, err
		}
		fn, ok := goja.AssertFunction(v)
		if !ok {
			return nil, &Error{Kind: Syntax, Message: "SyntaxError: the user-defined function " + name + " is not a function"}
		}
		f.fns[name] = fn
	}
	return f, nil
}

// guard runs fn under the Runner's bounds.
func (f *Functions) guard(fn func() (goja.Value, error)) (goja.Value, error) {
	f.sb.vm.ClearInterrupt()
	w := f.r.watch(f.sb.vm)
	v, err := fn()
	w.stop()
	if err != nil {
		return nil, f.r.failure(w, err)
	}
	return v, nil
}

// Has reports whether a function of that name is known.
func (f *Functions) Has(name string) bool {
	_, ok := f.fns[name]
	return ok
}

// Call calls function name with args, each JSON, and returns its result
// as JSON: nil when it returns undefined (or a function, which JSON
// cannot hold).
func (f *Functions) Call(name string, args [][]byte) ([]byte, error) {
	fn, ok := f.fns[name]
	if !ok {
		return nil, &Error{Kind: Thrown, Message: "ReferenceError: " + name + " is not defined"}
	}
	var b []byte
	_, err := f.guard(func() (goja.Value, error) {
		vals := make([]goja.Value, len(args))
		for i, a := range args {
			var err error
			if vals[i], err = f.sb.value(a); err != nil {
				return nil, err
			}
		}
		out, err := fn(goja.Undefined(), vals...)
		if err != nil {
			return nil, err
		}
		b, err = f.sb.enc.encode(out)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}
