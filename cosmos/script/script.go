// Package script runs Cosmos DB's server-side JavaScript (stored
// procedures, triggers and user-defined functions) in goja sandboxes,
// each under a time and a memory bound. It knows nothing of the cosmos
// package, which imports it (docs/architecture.md): what a script does to
// the container reaches the caller through a Host, as JSON.
package script

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// The bounds a Runner applies unless told others: the service stops a
// stored procedure after about 5 s.
const (
	DefaultTime   = 5 * time.Second
	DefaultMemory = 256 << 20
	// maxStack bounds the script's call depth, so that a runaway
	// recursion is an error rather than a goroutine stack of gigabytes.
	maxStack = 2000
	// maxPrograms bounds the compiled scripts a Runner keeps.
	maxPrograms = 256
)

// Limits bound a script's run.
type Limits struct {
	// Time is how long a run (or a user-defined function's call) may
	// take; 0 is DefaultTime. A script's operations are refused (their
	// isAccepted false) past four fifths of it.
	Time time.Duration
	// Memory is how far the process's heap may grow during a run, in
	// bytes; 0 is DefaultMemory. It is the whole process's heap, an
	// approximation: what other requests allocate meanwhile counts too.
	Memory uint64
	// MaxBodySize is what getMaxResponseBodySize tells; 0 is 2 MB.
	MaxBodySize int
}

// Kind is what stopped a script.
type Kind uint8

// The kinds of Error.
const (
	// Thrown: the script threw (or an operation's error went unhandled).
	Thrown Kind = iota
	// Timeout: the script ran past Limits.Time.
	Timeout
	// Memory: the heap grew past Limits.Memory.
	Memory
	// Syntax: the script does not compile.
	Syntax
)

// Error is a script's failure.
type Error struct {
	Kind Kind
	// Status is the status of the operation whose error the script threw,
	// when it threw one (err.number), else 0.
	Status int
	// Message is what was thrown, as JavaScript writes it ("Error: text",
	// or a thrown string as it is), or the reason for the stop.
	Message string
}

func (e *Error) Error() string { return e.Message }

// OpError is an operation's failure, which the script sees as an error
// whose number is Status.
type OpError struct {
	Status  int
	Message string
}

func (e *OpError) Error() string { return e.Message }

// Host serves a script's operations on its container.
type Host interface {
	// Op runs operation op ("create", "upsert", "replace", "read",
	// "delete", "query") with args, a JSON object of the call's arguments
	// (link, doc, query, options), and returns its result as JSON (a
	// document, or an array of them for a query; nil for a delete), or an
	// *OpError.
	Op(op string, args []byte) ([]byte, error)
}

// Call is one run of a stored procedure or a trigger.
type Call struct {
	// Source is the script's body: a function.
	Source string
	// Args are a stored procedure's arguments, each JSON.
	Args [][]byte
	// Operation, Request and Response are what a trigger sees: the
	// request's operation ("Create", ...), its body and, for a
	// post-trigger, the response's body, as JSON (nil: undefined).
	Operation string
	Request   []byte
	Response  []byte
	// SelfLink and AltLink are the collection's links.
	SelfLink, AltLink string
	Host              Host
}

// Result is what a run leaves.
type Result struct {
	// Body is the response's body as the script set it, JSON; nil when it
	// set none.
	Body []byte
	// Request is the request's body as a pre-trigger left it, JSON.
	Request []byte
	// Log holds the lines of console.log.
	Log []string
}

// Runner runs scripts. It is safe for concurrent use: each run has a
// sandbox of its own.
type Runner struct {
	limits  Limits
	prelude *goja.Program

	mu    lockorder.Mutex
	progs map[string]*goja.Program
}

//go:embed prelude.js
var preludeSource string

// prelude is the server-side API, compiled once for every Runner: a
// compiled goja.Program is immutable and runs in any runtime, so the
// Runner of each sandbox (issue 29) does not compile it again.
var prelude = sync.OnceValue(func() *goja.Program { return goja.MustCompile("prelude.js", preludeSource, true) })

// New returns a Runner with limits.
func New(limits Limits) *Runner {
	if limits.Time <= 0 {
		limits.Time = DefaultTime
	}
	if limits.Memory == 0 {
		limits.Memory = DefaultMemory
	}
	if limits.MaxBodySize <= 0 {
		limits.MaxBodySize = 2 << 20
	}
	return &Runner{limits: limits, prelude: prelude(), progs: map[string]*goja.Program{}}
}

// compile returns the program of a function's source, compiled once.
func (r *Runner) compile(src string) (*goja.Program, error) {
	r.mu.Lock()
	p, ok := r.progs[src]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := goja.Compile("script", "("+src+"\n)", false)
	if err != nil {
		return nil, &Error{Kind: Syntax, Message: syntaxMessage(err)}
	}
	r.mu.Lock()
	if len(r.progs) >= maxPrograms {
		clear(r.progs)
	}
	r.progs[src] = p
	r.mu.Unlock()
	return p, nil
}

// syntaxMessage is a compile error as the script's author reads it.
func syntaxMessage(err error) string {
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		return "SyntaxError: " + se.Message
	}
	return "SyntaxError: " + err.Error()
}

// sandbox is one goja runtime with the server-side API set up.
type sandbox struct {
	vm    *goja.Runtime
	api   *goja.Object
	parse goja.Callable // JSON.parse
	enc   *encoder
	log   []string
	w     *watch
}

// newSandbox makes a runtime whose operations go to host.
func (r *Runner) newSandbox(host Host, self, alt string) (*sandbox, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxStack)
	sb := &sandbox{vm: vm}
	hostObj := vm.NewObject()
	set := func(name string, v any) {
		if err := hostObj.Set(name, v); err != nil {
			panic(err) // a plain object takes any property
		}
	}
	set("selfLink", self)
	set("altLink", alt)
	set("maxBodySize", r.limits.MaxBodySize)
	set("accepting", func() bool { return sb.w == nil || sb.w.accepting() })
	set("log", func(line string) { sb.log = append(sb.log, line) })
	// op takes the call's arguments as the script's value, which it
	// writes as JSON itself (encode.go), and answers {status, body,
	// message}.
	set("op", func(call goja.FunctionCall) goja.Value {
		status, body, message := 200, "", ""
		if host == nil {
			status, message = 400, "This script cannot reach the collection."
		} else if args, err := sb.enc.encode(call.Argument(1)); err != nil {
			panic(err) // a JavaScript exception: the script sees it thrown
		} else if b, err := host.Op(call.Argument(0).String(), args); err != nil {
			oe := &OpError{Status: 500, Message: err.Error()}
			errors.As(err, &oe)
			status, message = oe.Status, oe.Message
		} else {
			body = string(b)
		}
		res := vm.NewObject()
		_ = res.Set("status", status)
		_ = res.Set("body", body)
		_ = res.Set("message", message)
		return res
	})
	fnv, err := vm.RunProgram(r.prelude)
	if err != nil {
		return nil, err
	}
	fn, _ := goja.AssertFunction(fnv)
	api, err := fn(goja.Undefined(), hostObj)
	if err != nil {
		return nil, err
	}
	sb.api = api.ToObject(vm)
	if err := vm.Set("getContext", sb.api.Get("getContext")); err != nil {
		return nil, err
	}
	if err := vm.Set("console", sb.api.Get("console")); err != nil {
		return nil, err
	}
	sb.parse, _ = goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	sb.enc = newEncoder(vm)
	return sb, nil
}

// value parses JSON into a value of the sandbox; nil is undefined.
func (sb *sandbox) value(b []byte) (goja.Value, error) {
	if b == nil {
		return goja.Undefined(), nil
	}
	return sb.parse(goja.Undefined(), sb.vm.ToValue(string(b)))
}

// method calls the prelude's method name.
func (sb *sandbox) method(name string, args ...goja.Value) (goja.Value, error) {
	fn, _ := goja.AssertFunction(sb.api.Get(name))
	return fn(goja.Undefined(), args...)
}

// Run runs a stored procedure or a trigger: the function of c.Source,
// called with c.Args, then the callbacks of its operations. The error is an
// *Error for the script's own failure, else the host's.
func (r *Runner) Run(c Call) (Result, error) {
	prog, err := r.compile(c.Source)
	if err != nil {
		return Result{}, err
	}
	sb, err := r.newSandbox(c.Host, c.SelfLink, c.AltLink)
	if err != nil {
		return Result{}, err
	}
	sb.w = r.watch(sb.vm)
	defer sb.w.stop()
	res, err := sb.run(prog, c)
	if err != nil {
		return Result{}, r.failure(sb.w, err)
	}
	res.Log = sb.log
	return res, nil
}

// run is Run's work inside the sandbox.
func (sb *sandbox) run(prog *goja.Program, c Call) (Result, error) {
	req, err := sb.value(c.Request)
	if err != nil {
		return Result{}, err
	}
	resp, err := sb.value(c.Response)
	if err != nil {
		return Result{}, err
	}
	if _, err := sb.method("start", sb.vm.ToValue(c.Operation), req, resp); err != nil {
		return Result{}, err
	}
	fnv, err := sb.vm.RunProgram(prog)
	if err != nil {
		return Result{}, err
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return Result{}, &Error{Kind: Syntax, Message: "SyntaxError: the script is not a function"}
	}
	args := make([]goja.Value, len(c.Args))
	for i, a := range c.Args {
		if args[i], err = sb.value(a); err != nil {
			return Result{}, err
		}
	}
	if _, err := fn(goja.Undefined(), args...); err != nil {
		return Result{}, err
	}
	if _, err := sb.method("drain"); err != nil {
		return Result{}, err
	}
	out, err := sb.method("result")
	if err != nil {
		return Result{}, err
	}
	o := out.ToObject(sb.vm)
	var res Result
	if res.Body, err = sb.enc.encode(o.Get("body")); err != nil {
		return Result{}, err
	}
	if res.Request, err = sb.enc.encode(o.Get("request")); err != nil {
		return Result{}, err
	}
	return res, nil
}

// failure turns what stopped a run into an *Error.
func (r *Runner) failure(w *watch, err error) error {
	var (
		se *Error
		ie *goja.InterruptedError
		ex *goja.Exception
		so *goja.StackOverflowError
	)
	switch {
	case errors.As(err, &se):
		return se
	case errors.As(err, &ie):
		if k, ok := ie.Value().(Kind); ok && k == Memory {
			return &Error{Kind: Memory, Message: fmt.Sprintf("The script used more than the %d MB of memory it is allowed.", r.limits.Memory>>20)}
		}
		return &Error{Kind: Timeout, Message: fmt.Sprintf("The script ran past the %v it is allowed.", r.limits.Time)}
	case errors.As(err, &so):
		return &Error{Kind: Thrown, Message: "RangeError: Maximum call stack size exceeded"}
	case errors.As(err, &ex):
		e := &Error{Kind: Thrown, Message: ex.Value().String()}
		if o, ok := ex.Value().(*goja.Object); ok {
			if n := o.Get("number"); n != nil && !goja.IsUndefined(n) {
				if st := int(n.ToInteger()); st >= 400 && st < 600 {
					e.Status = st
				}
			}
		}
		return e
	}
	return &Error{Kind: Thrown, Message: strings.TrimSpace(err.Error())}
}
