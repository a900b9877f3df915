package sqlfilter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name     string
		expr     string
		params   map[string]any
		before   testMessage
		wantSys  map[string]any
		wantUser map[string]any
	}{
		{
			name:     "DocSetSource",
			expr:     "SET source='routedOrders'",
			before:   testMessage{user: map[string]any{"source": "orders"}},
			wantUser: map[string]any{"source": "routedOrders"},
		},
		{
			name:     "DocQuantityRemovePriorityCorrelationId",
			expr:     "SET quantity = quantity / 2; REMOVE priority;SET sys.CorrelationId = 'low';",
			before:   testMessage{user: map[string]any{"quantity": int32(10), "priority": "high", "color": "red"}},
			wantSys:  map[string]any{"CorrelationId": "low"},
			wantUser: map[string]any{"quantity": int64(5), "color": "red"},
		},
		{
			name:     "SemicolonsOptional",
			expr:     "SET a = 1 SET b = 'two' REMOVE c",
			before:   testMessage{user: map[string]any{"c": true}},
			wantUser: map[string]any{"a": int64(1), "b": "two"},
		},
		{
			name:     "LaterStatementsSeeEarlierOnes",
			expr:     "SET a = 2; SET b = a * 10; SET a = a + b",
			wantUser: map[string]any{"a": int64(22), "b": int64(20)},
		},
		{
			name:     "PropertyNamesCaseInsensitive",
			expr:     "SET Color = COLOR + '!'; REMOVE SIZE",
			before:   testMessage{user: map[string]any{"color": "red", "size": 3}},
			wantUser: map[string]any{"color": "red!"},
		},
		{
			name:     "KeywordsCaseInsensitive",
			expr:     "set a = 1; remove b",
			before:   testMessage{user: map[string]any{"b": 1}},
			wantUser: map[string]any{"a": int64(1)},
		},
		{
			name:    "SetSysLabelAndTo",
			expr:    "SET sys.Label = 'routed-' + sys.Label; SET sys.To = 'Store' + 7",
			before:  testMessage{sys: map[string]any{"Label": "red"}},
			wantSys: map[string]any{"Label": "routed-red", "To": "Store7"},
		},
		{
			name:    "SetSysSubjectIsLabel",
			expr:    "SET sys.subject = 'x'",
			wantSys: map[string]any{"Label": "x"},
		},
		{
			name:    "SetSysConvertsToString",
			expr:    "SET sys.MessageId = 42; SET sys.SessionId = 1.5; SET sys.ContentType = TRUE",
			wantSys: map[string]any{"MessageId": "42", "SessionId": "1.5", "ContentType": "True"},
		},
		{
			name:    "SetSysTimeToLiveFromText",
			expr:    "SET sys.TimeToLive = '1.02:03:04'",
			wantSys: map[string]any{"TimeToLive": 26*time.Hour + 3*time.Minute + 4*time.Second},
		},
		{
			name:    "SetSysTimeToLiveFromDuration",
			expr:    "SET sys.TimeToLive = @ttl + @ttl",
			params:  map[string]any{"ttl": time.Minute},
			wantSys: map[string]any{"TimeToLive": 2 * time.Minute},
		},
		{
			name:    "SetSysScheduledEnqueueTimeFromText",
			expr:    "SET sys.ScheduledEnqueueTimeUtc = '2024-05-06T07:08:09Z'",
			wantSys: map[string]any{"ScheduledEnqueueTimeUtc": enqueued},
		},
		{
			name:    "SetSysUnknownStoresNil",
			expr:    "SET sys.ReplyTo = missing",
			before:  testMessage{sys: map[string]any{"ReplyTo": "x"}},
			wantSys: map[string]any{"ReplyTo": nil},
		},
		{
			name:     "SetUserUnknownStoresNil",
			expr:     "SET a = missing",
			before:   testMessage{user: map[string]any{"a": int64(1)}},
			wantUser: map[string]any{"a": nil},
		},
		{
			name:     "SetKeepsExistingIntType",
			expr:     "SET quantity = quantity * 1.5",
			before:   testMessage{user: map[string]any{"quantity": int64(5)}},
			wantUser: map[string]any{"quantity": int64(8)}, // 7.5 rounds to even
		},
		{
			name:     "SetKeepsExistingStringType",
			expr:     "SET code = 12",
			before:   testMessage{user: map[string]any{"code": "old"}},
			wantUser: map[string]any{"code": "12"},
		},
		{
			name:     "SetKeepsExistingFloatType",
			expr:     "SET price = '2.25'",
			before:   testMessage{user: map[string]any{"price": 1.0}},
			wantUser: map[string]any{"price": 2.25},
		},
		{
			name:     "SetKeepsExistingBoolType",
			expr:     "SET flag = 'true'",
			before:   testMessage{user: map[string]any{"flag": false}},
			wantUser: map[string]any{"flag": true},
		},
		{
			name:     "SetKeepsExistingUUIDType",
			expr:     "SET id = '12345678-9abc-def0-1234-56789abcdef0'",
			before:   testMessage{user: map[string]any{"id": [16]byte{}}},
			wantUser: map[string]any{"id": [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}},
		},
		{
			name:     "SetReplacesNilWithoutConversion",
			expr:     "SET a = 3",
			before:   testMessage{user: map[string]any{"a": nil}},
			wantUser: map[string]any{"a": int64(3)},
		},
		{
			name:     "SetDelimitedAndUserScope",
			expr:     "SET [my prop] = 'x'; SET user.other = \"my prop\"",
			wantUser: map[string]any{"my prop": "x", "other": "x"},
		},
		{
			name:     "SetWithParameter",
			expr:     "SET a = @v",
			params:   map[string]any{"@v": uint16(7)},
			wantUser: map[string]any{"a": int64(7)},
		},
		{
			name:     "SetNegativeAndParenthesized",
			expr:     "SET a = -(2 + 3) * 2",
			wantUser: map[string]any{"a": int64(-10)},
		},
		{
			name:     "RemoveMissingIsNoOp",
			expr:     "REMOVE nothing",
			wantUser: map[string]any{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := MustCompileAction(t, tc.expr, tc.params)
			m := &testMessage{sys: map[string]any{}, user: map[string]any{}}
			for k, v := range tc.before.sys {
				m.sys[k] = v
			}
			for k, v := range tc.before.user {
				m.user[k] = v
			}
			if err := a.Apply(m); err != nil {
				t.Fatalf("Apply(%q): %v", tc.expr, err)
			}
			wantSys := map[string]any{}
			for k, v := range tc.before.sys {
				wantSys[k] = v
			}
			for k, v := range tc.wantSys {
				wantSys[k] = v
			}
			if diff := cmp.Diff(wantSys, m.sys); diff != "" {
				t.Errorf("system properties mismatch (-want +got):\n%s", diff)
			}
			if tc.wantUser == nil {
				tc.wantUser = tc.before.user
			}
			if tc.wantUser == nil {
				tc.wantUser = map[string]any{}
			}
			if diff := cmp.Diff(tc.wantUser, m.user); diff != "" {
				t.Errorf("user properties mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyNewID(t *testing.T) {
	a := MustCompileAction(t, "SET id = newid(); SET text = sys.MessageId", nil)
	m := &testMessage{sys: map[string]any{"MessageId": "m"}}
	if err := a.Apply(m); err != nil {
		t.Fatal(err)
	}
	id, ok := m.user["id"].([16]byte)
	if !ok {
		t.Fatalf("id = %T, want [16]byte", m.user["id"])
	}
	if id[6]>>4 != 4 || id[8]>>6 != 2 {
		t.Errorf("id %x is not a version 4, variant 1 UUID", id)
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name     string
		expr     string
		before   map[string]any
		err      string
		wantUser map[string]any // what the statements before the failing one left
	}{
		{
			name:     "DivisionByZeroStopsAfterEarlierStatements",
			expr:     "SET a = 1; SET b = 1 / 0; SET c = 1",
			err:      "Attempted to divide by zero.",
			wantUser: map[string]any{"a": int64(1)},
		},
		{
			name:     "ConversionToExistingIntFails",
			expr:     "SET quantity = 'many'",
			before:   map[string]any{"quantity": int64(1)},
			err:      "The input string 'many' was not in a correct format.",
			wantUser: map[string]any{"quantity": int64(1)},
		},
		{
			name:     "ConversionToExistingBoolFails",
			expr:     "SET flag = 'yes'",
			before:   map[string]any{"flag": true},
			err:      "String 'yes' was not recognized as a valid Boolean.",
			wantUser: map[string]any{"flag": true},
		},
		{
			name:     "ConversionFromTimeToIntFails",
			expr:     "SET n = sys.EnqueuedTimeUtc",
			before:   map[string]any{"n": int64(1)},
			err:      "Invalid cast from 'System.DateTime' to 'System.Int64'.",
			wantUser: map[string]any{"n": int64(1)},
		},
		{
			name:     "TypeErrorInExpression",
			expr:     "SET a = 'x' - 1",
			err:      "Operator '-' cannot be applied to operands of type 'string' and 'long'",
			wantUser: map[string]any{},
		},
		{
			name:     "TimeToLiveFromNumberFails",
			expr:     "SET sys.TimeToLive = 5",
			err:      "Invalid cast from 'System.Int64' to 'System.TimeSpan'.",
			wantUser: map[string]any{},
		},
		{
			name:     "ScheduledEnqueueTimeFromBadTextFails",
			expr:     "SET sys.ScheduledEnqueueTimeUtc = 'soon'",
			err:      "String 'soon' was not recognized as a valid DateTime.",
			wantUser: map[string]any{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := MustCompileAction(t, tc.expr, nil)
			m := &testMessage{sys: map[string]any{"EnqueuedTimeUtc": enqueued}, user: map[string]any{}}
			for k, v := range tc.before {
				m.user[k] = v
			}
			err := a.Apply(m)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Apply(%q) = %v, want an error containing %q", tc.expr, err, tc.err)
			}
			if code := core.ErrorCode(err); code != core.EINVALID {
				t.Errorf("error code = %q, want %q", code, core.EINVALID)
			}
			if diff := cmp.Diff(tc.wantUser, m.user); diff != "" {
				t.Errorf("user properties mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// rejectingMessage fails every SetSystem.
type rejectingMessage struct{ testMessage }

func (m *rejectingMessage) SetSystem(name string, v any) error {
	return core.Errorf(core.EINVALID, "%s is read-only here", name)
}

func TestApplyReturnsSetSystemError(t *testing.T) {
	a := MustCompileAction(t, "SET sys.To = 'x'", nil)
	err := a.Apply(&rejectingMessage{})
	var e *core.Error
	if !errors.As(err, &e) || e.Message != "To is read-only here" {
		t.Errorf("Apply = %v, want the message's own error", err)
	}
}

func TestCompileActionErrors(t *testing.T) {
	tests := []struct {
		name   string
		expr   string
		params map[string]any
		err    string
	}{
		{name: "Empty", expr: "", err: "The SQL rule action expression is empty."},
		{name: "TooLong", expr: "SET a = '" + strings.Repeat("x", 1016) + "'", err: "is 1026 characters long, more than the 1024 allowed"},
		{name: "FilterInsteadOfAction", expr: "EventType = 'x'", err: "Token in error=EventType, Additional details=syntax error, unexpected IDENTIFIER, expecting SET, or REMOVE"},
		{name: "OnlySemicolon", expr: ";", err: "unexpected ';', expecting SET, or REMOVE"},
		{name: "DoubleSemicolon", expr: "SET a = 1;;", err: "unexpected ';', expecting SET, or REMOVE"},
		{name: "SetWithoutEquals", expr: "SET a 1", err: "expecting '='"},
		{name: "SetWithoutValue", expr: "SET a =", err: "unexpected EOF"},
		{name: "SetCondition", expr: "SET a = b = 1", err: "A value is expected here, not a condition."},
		{name: "SetPredicate", expr: "SET a = b IS NULL", err: "A value is expected here, not a condition."},
		{name: "SetReadOnlySystemProperty", expr: "SET sys.DeliveryCount = 1", err: "The system property 'DeliveryCount' cannot be set by a rule action."},
		{name: "SetUnknownSystemProperty", expr: "SET sys.Colour = 1", err: "'Colour' is not a system property"},
		{name: "RemoveSystemProperty", expr: "REMOVE sys.Label", err: "The system property 'Label' cannot be removed by a rule action."},
		{name: "RemoveWithValue", expr: "REMOVE a = 1", err: "unexpected '=', expecting SET, or REMOVE"},
		{name: "SetConstant", expr: "SET 1 = 1", err: "unexpected INTEGER, expecting IDENTIFIER"},
		{name: "TooManyStatements", expr: strings.Repeat("SET a=1;", 33), err: "more than 32 statements"},
		{name: "MissingParameter", expr: "SET a = @p", err: "'@p' is used in the SQL expression but was not specified"},
		{name: "ExtraParameter", expr: "SET a = 1", params: map[string]any{"p": 1}, err: "'@p' was specified but is not used"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := CompileAction(tc.expr, tc.params)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("CompileAction(%q) = %v, %v; want an error containing %q", tc.expr, a, err, tc.err)
			}
			if code := core.ErrorCode(err); code != core.EINVALID {
				t.Errorf("error code = %q, want %q", code, core.EINVALID)
			}
		})
	}
}

func TestCompileActionAcceptsThirtyTwoStatements(t *testing.T) {
	expr := strings.Repeat("SET a=a+1;", 32)
	a := MustCompileAction(t, expr, nil)
	m := &testMessage{user: map[string]any{"a": int64(0)}}
	if err := a.Apply(m); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"a": int64(32)}, m.user); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if a.String() != expr {
		t.Errorf("String() = %q, want the expression", a.String())
	}
}
