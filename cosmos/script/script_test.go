package script

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeHost records operations and answers from a map of documents.
type fakeHost struct {
	ops  []string
	docs map[string]json.RawMessage
}

func (h *fakeHost) Op(op string, args []byte) ([]byte, error) {
	h.ops = append(h.ops, op)
	var a struct {
		Link string          `json:"link"`
		Doc  json.RawMessage `json:"doc"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	switch op {
	case "create":
		var d struct{ ID string }
		json.Unmarshal(a.Doc, &d)
		if _, ok := h.docs[d.ID]; ok {
			return nil, &OpError{Status: 409, Message: "Resource with specified id or name already exists."}
		}
		h.docs[d.ID] = a.Doc
		return a.Doc, nil
	case "read":
		d, ok := h.docs[a.Link]
		if !ok {
			return nil, &OpError{Status: 404, Message: "Resource Not Found"}
		}
		return d, nil
	}
	return []byte("[]"), nil
}

func TestRunSetsBodyAndLogs(t *testing.T) {
	r := New(Limits{})
	res, err := r.Run(Call{
		Source: `function (a, b) {
			console.log('The value of %s is %s.', 'x', 1);
			for (var i = 0; i < 3; i++) getContext().getResponse().appendValue('Body', i);
			getContext().getResponse().appendBody(a.temp + b);
		}`,
		Args: [][]byte{[]byte(`{"temp":"so"}`), []byte(`7`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Body); got != `"012so7"` {
		t.Errorf("body %s, want \"012so7\"", got)
	}
	if len(res.Log) != 1 || res.Log[0] != "The value of x is 1." {
		t.Errorf("log %q", res.Log)
	}
}

func TestRunCallsBackAfterTheFunctionReturns(t *testing.T) {
	h := &fakeHost{docs: map[string]json.RawMessage{}}
	res, err := New(Limits{}).Run(Call{Host: h, Source: `function () {
		var c = getContext().getCollection(), seen = [];
		var ok = c.createDocument(c.getSelfLink(), {id: 'a'}, function (err, doc) {
			seen.push('created ' + doc.id);
			c.createDocument(c.getSelfLink(), {id: 'a'}, {}, function (err) {
				seen.push('again ' + err.number);
				getContext().getResponse().setBody(seen);
			});
		});
		seen.push('returned ' + ok);
	}`, SelfLink: "dbs/d/colls/c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Body); got != `["returned true","created a","again 409"]` {
		t.Errorf("body %s", got)
	}
}

func TestUnhandledOperationErrorStopsTheScript(t *testing.T) {
	h := &fakeHost{docs: map[string]json.RawMessage{}}
	_, err := New(Limits{}).Run(Call{Host: h, Source: `function () {
		getContext().getCollection().readDocument('missing');
		getContext().getCollection().createDocument('', {id: 'b'});
	}`})
	var se *Error
	if !errors.As(err, &se) || se.Kind != Thrown || se.Status != 404 || se.Message != "Error: Resource Not Found" {
		t.Fatalf("err %#v, want a thrown 404", err)
	}
	if len(h.ops) != 1 {
		t.Errorf("ops %v: the create after the failure ran", h.ops)
	}
}

func TestThrownString(t *testing.T) {
	_, err := New(Limits{}).Run(Call{Source: `function () { throw 'id mismatch'; }`})
	var se *Error
	if !errors.As(err, &se) || se.Kind != Thrown || se.Message != "id mismatch" || se.Status != 0 {
		t.Fatalf("err %#v", err)
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := New(Limits{}).Run(Call{Source: `function ( {`})
	var se *Error
	if !errors.As(err, &se) || se.Kind != Syntax || !strings.HasPrefix(se.Message, "SyntaxError: ") {
		t.Fatalf("err %#v", err)
	}
}

func TestInfiniteLoopStopsAtTheTimeBound(t *testing.T) {
	start := time.Now()
	_, err := New(Limits{Time: 200 * time.Millisecond}).Run(Call{Source: `function () { while (true) {} }`})
	var se *Error
	if !errors.As(err, &se) || se.Kind != Timeout {
		t.Fatalf("err %#v, want a timeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

func TestOperationsRefusedPastTheBudget(t *testing.T) {
	h := &fakeHost{docs: map[string]json.RawMessage{}}
	res, err := New(Limits{Time: 300 * time.Millisecond}).Run(Call{Host: h, Source: `function () {
		var c = getContext().getCollection(), n = 0;
		while (c.createDocument('', {id: 'd' + n})) n++;
		getContext().getResponse().setBody(n > 0);
	}`})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != "true" || len(h.docs) == 0 {
		t.Fatalf("body %s, %d docs", res.Body, len(h.docs))
	}
}

func TestMemoryBound(t *testing.T) {
	_, err := New(Limits{Time: time.Minute, Memory: 64 << 20}).Run(Call{Source: `function () {
		var a = [];
		var s = 'x'.repeat(1 << 20);
		while (true) a.push(s + a.length);
	}`})
	var se *Error
	if !errors.As(err, &se) || se.Kind != Memory {
		t.Fatalf("err %#v, want a memory stop", err)
	}
}

func TestTriggerChangesTheRequest(t *testing.T) {
	res, err := New(Limits{}).Run(Call{Operation: "Create", Request: []byte(`{"id":"doc1"}`), Source: `function () {
		var r = getContext().getRequest(), item = r.getBody();
		if (r.getOperationType() !== 'Create') throw 'op ' + r.getOperationType();
		item.id = item.id.toUpperCase();
		r.setBody(item);
	}`})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Request) != `{"id":"DOC1"}` {
		t.Errorf("request %s", res.Request)
	}
}

func TestFunctions(t *testing.T) {
	f, err := New(Limits{Time: 200 * time.Millisecond}).Functions(map[string]string{
		"tax":  `function (income) { return income * 0.1; }`,
		"loop": `function () { for (;;) {} }`,
		"none": `function () {}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := f.Call("tax", [][]byte{[]byte("1000")}); err != nil || string(out) != "100" {
		t.Errorf("tax: %s, %v", out, err)
	}
	if out, err := f.Call("none", nil); err != nil || out != nil {
		t.Errorf("none: %s, %v", out, err)
	}
	var se *Error
	if _, err := f.Call("loop", nil); !errors.As(err, &se) || se.Kind != Timeout {
		t.Errorf("loop: %v", err)
	}
	// The sandbox serves calls after an interrupt.
	if out, err := f.Call("tax", [][]byte{[]byte("50")}); err != nil || string(out) != "5" {
		t.Errorf("tax after a timeout: %s, %v", out, err)
	}
}

func TestCallbackResultThroughArguments(t *testing.T) {
	h := &fakeHost{docs: map[string]json.RawMessage{}}
	res, err := New(Limits{}).Run(Call{Host: h, Source: `function () {
		var c = getContext().getCollection();
		c.createDocument('', {id: 'a'}, function () { getContext().getResponse().setBody(arguments[1].id); });
	}`})
	if err != nil || string(res.Body) != `"a"` {
		t.Fatalf("body %s, %v", res.Body, err)
	}
}
