package script

import (
	"errors"
	"testing"

	"github.com/dop251/goja"
)

// TestEncodeWritesWhatJSONStringifyWrites holds encode to JSON.stringify,
// byte for byte, on the values a document is made of and on those it
// leaves to JSON.stringify, each of which must say so.
func TestEncodeWritesWhatJSONStringifyWrites(t *testing.T) {
	cases := []struct {
		expr string
		fast bool // appendJSON writes it itself
	}{
		{`undefined`, true},
		{`null`, true},
		{`true`, true},
		{`false`, true},
		{`0`, true},
		{`-0`, true},
		{`42`, true},
		{`-7`, true},
		{`9007199254740993`, true},
		{`1.5`, true},
		{`1e21`, true},
		{`1e-7`, true},
		{`0.1 + 0.2`, true},
		{`NaN`, true},
		{`Infinity`, true},
		{`-Infinity`, true},
		{`""`, true},
		{`"plain"`, true},
		{`"quote \" backslash \\ slash / tab \t nl \n cr \r bs \b ff \f nul \u0000 us \u001f del \u007f"`, true},
		{`"é ü 漢字 😀 \u2028 \u2029 <&>"`, true},
		{`"lone \ud800 surrogate"`, false},
		{`"\udc00"`, false},
		{`(function () {})`, true},
		{`Symbol("s")`, true},
		{`({})`, true},
		{`[]`, true},
		{`({id: "a", pk: "p", n: 7, f: 1.25, t: true, z: null, tags: ["x", 1, false, null], o: {deep: {deeper: [{}]}}})`, true},
		{`({u: undefined, f: function () {}, s: Symbol("s"), kept: 1})`, true},
		{`({u: undefined})`, true},
		{`[undefined, function () {}, Symbol("s"), 1]`, true},
		{`(function () { var a = [1]; a[3] = 4; return a; })()`, true},
		{`({b: 1, a: 2, 10: "ten", 2: "two"})`, true},
		{`(function () { var o = {}; o["é"] = 1; o["\n"] = 2; o[""] = 3; return o; })()`, true},
		{`(function () { function P() { this.own = 1; } P.prototype.inherited = 2; return new P(); })()`, true},
		{`(function () { var o = {shown: 1}; Object.defineProperty(o, "hidden", {value: 2, enumerable: false}); return o; })()`, true},
		{`Object.create(null)`, true},
		{`new Error("boom")`, false},
		{`(function () { return arguments; })(1, "two")`, false},
		{`({get g() { return "got"; }})`, true},
		{`new Date(0)`, false},
		{`({when: new Date(86400000)})`, false},
		{`({toJSON: function () { return "mine"; }})`, false},
		{`[{toJSON: function () { return 5; }}]`, false},
		{`new String("boxed")`, false},
		{`new Number(3)`, false},
		{`new Boolean(false)`, false},
		{`new Proxy({a: 1}, {})`, false},
		{`new Map([[1, 2]])`, false},
		{`new Uint8Array([1, 2])`, false},
		{`(function () { var o = {}; for (var i = 0; i < 100; i++) { o = {o: o}; } return o; })()`, false},
	}
	vm := goja.New()
	e := newEncoder(vm)
	str, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	for _, c := range cases {
		v, err := vm.RunString(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		want, err := str(goja.Undefined(), v)
		if err != nil {
			t.Fatalf("%s: JSON.stringify: %v", c.expr, err)
		}
		got, err := e.encode(v)
		if err != nil {
			t.Fatalf("%s: encode: %v", c.expr, err)
		}
		if goja.IsUndefined(want) {
			if got != nil {
				t.Errorf("%s: encode = %q; JSON.stringify writes undefined", c.expr, got)
			}
		} else if got == nil || string(got) != want.String() {
			t.Errorf("%s: encode = %q; JSON.stringify = %q", c.expr, got, want.String())
		}
		if _, fast := appendJSON(nil, v, 0); fast != c.fast {
			t.Errorf("%s: appendJSON writes it itself: %v, want %v", c.expr, fast, c.fast)
		}
	}
}

// TestEncodeThrowsWhatJSONStringifyThrows: a cycle, a BigInt and a getter
// that throws are JSON.stringify's exceptions, as the script would see
// them had it called JSON.stringify itself.
func TestEncodeThrowsWhatJSONStringifyThrows(t *testing.T) {
	vm := goja.New()
	e := newEncoder(vm)
	for _, expr := range []string{
		`(function () { var o = {}; o.self = o; return o; })()`,
		`(function () { var a = []; a.push({a: a}); return a; })()`,
		`({n: 10n})`,
		`({get g() { throw new Error("getter"); }})`,
	} {
		v, err := vm.RunString(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		_, err = e.encode(v)
		var ex *goja.Exception
		if !errors.As(err, &ex) {
			t.Errorf("%s: encode's error = %v, want a JavaScript exception", expr, err)
		}
	}
}

// FuzzEncodeAgainstJSONStringify parses any JSON text in a sandbox and
// holds encode's output for the value to JSON.stringify's.
func FuzzEncodeAgainstJSONStringify(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a","pk":"p","n":7,"f":-1.5e-9,"t":true,"z":null,"tags":["x",1,false]}`,
		`"\u0000\u001f\"\\\/\b\f\n\r\t\u2028\ud83d\ude00"`,
		`[1e308,-0,0.1,123456789012345678901234567890,5e-324]`,
		`{"__proto__":1,"10":"ten","2":"two","b":{"a":[[],{}]}}`,
	} {
		f.Add(seed)
	}
	vm := goja.New()
	e := newEncoder(vm)
	parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	str, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	f.Fuzz(func(t *testing.T, text string) {
		v, err := parse(goja.Undefined(), vm.ToValue(text))
		if err != nil {
			return // not JSON
		}
		want, err := str(goja.Undefined(), v)
		if err != nil {
			t.Fatalf("JSON.stringify: %v", err)
		}
		got, err := e.encode(v)
		if err != nil || got == nil || string(got) != want.String() {
			t.Fatalf("encode(%q) = %q, %v; JSON.stringify = %q", text, got, err, want.String())
		}
	})
}
