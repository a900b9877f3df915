package sqlfilter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// compileErrorCase is an expression Compile must reject.
type compileErrorCase struct {
	name   string
	expr   string
	params map[string]any
	err    string // a substring of the error
}

var compileErrorCases = []compileErrorCase{
	{name: "Empty", expr: "", err: "The SQL filter expression is empty."},
	{name: "Blank", expr: " \t\n", err: "is empty"},
	{name: "TooLong", expr: "a = '" + strings.Repeat("x", 1020) + "'", err: "is 1026 characters long, more than the 1024 allowed"},
	{name: "MissingRightOperand", expr: "color = ", err: "Token in error=<EOF>, Additional details=syntax error, unexpected EOF"},
	{name: "UnterminatedString", expr: "color = 'blue", err: "Unterminated string constant."},
	{name: "UnterminatedDelimitedIdentifier", expr: "[my prop = 1", err: "Unterminated delimited identifier."},
	{name: "UnterminatedQuotedIdentifier", expr: `"my prop = 1`, err: "Unterminated quoted identifier."},
	{name: "DoubleEquals", expr: "color == 'blue'", err: "unexpected '='"},
	{name: "MissingAnd", expr: "color = 'blue' quantity = 1", err: "unexpected IDENTIFIER, expecting AND, OR, or <EOF>"},
	{name: "UnknownSystemProperty", expr: "sys.Colour = 1", err: "'Colour' is not a system property"},
	{name: "UnknownScope", expr: "foo.bar = 1", err: "The scope of a property must be sys or user"},
	{name: "DottedName", expr: "user.a.b = 1", err: "unexpected '.'"},
	{name: "BarePropertyIsNotACondition", expr: "color", err: "A condition (a comparison, IN, LIKE, IS NULL or EXISTS) is expected"},
	{name: "ArithmeticIsNotACondition", expr: "1 + 1", err: "is expected here, not a value"},
	{name: "NotOfValue", expr: "NOT 1", err: "AND, OR and NOT apply to conditions"},
	{name: "AndOfValue", expr: "a = 1 AND b", err: "AND, OR and NOT apply to conditions"},
	{name: "ConditionInArithmetic", expr: "(a = 1) + 1 = 2", err: "A value is expected here, not a condition."},
	{name: "ConditionCompared", expr: "(a = 1) = TRUE", err: "A value is expected here"},
	{name: "ChainedComparison", expr: "a = 1 = 1", err: "unexpected '='"},
	{name: "EmptyInList", expr: "a IN ()", err: "unexpected ')'"},
	{name: "InWithoutParentheses", expr: "a IN 1", err: "expecting '('"},
	{name: "InListUnclosed", expr: "a IN (1, 2", err: "expecting ')'"},
	{name: "IsWithoutNull", expr: "a IS 1", err: "expecting NULL"},
	{name: "NotWithoutInOrLike", expr: "a NOT = 1", err: "expecting IN, or LIKE"},
	{name: "LikeNumberPattern", expr: "a LIKE 1", err: "The pattern of a LIKE must be a string, not 1."},
	{name: "LikeLongEscape", expr: "a LIKE 'x' ESCAPE 'ab'", err: "The ESCAPE of a LIKE must be a string of one character, not 'ab'."},
	{name: "LikeEmptyEscape", expr: "a LIKE 'x' ESCAPE ''", err: "one character"},
	{name: "ExistsOfConstant", expr: "EXISTS(1)", err: "unexpected INTEGER, expecting IDENTIFIER"},
	{name: "ExistsOfExpression", expr: "EXISTS(a + 1)", err: "expecting ')'"},
	{name: "UnknownFunction", expr: "upper(a) = 'A'", err: "'upper' is not a known function"},
	{name: "NewIDWithArgument", expr: "newid(1) IS NULL", err: "The function 'newid' takes 0 arguments, not 1."},
	{name: "PropertyWithoutArgument", expr: "p() IS NULL", err: "The function 'p' takes 1 argument, not 0."},
	{name: "MissingParameter", expr: "a = @missing", err: "The parameter '@missing' is used in the SQL expression but was not specified."},
	{name: "ExtraParameter", expr: "a = 1", params: map[string]any{"@extra": 1}, err: "The parameter '@extra' was specified but is not used"},
	{name: "UnsupportedParameterType", expr: "a = @p", params: map[string]any{"p": []string{"x"}}, err: "has type []string"},
	{name: "IntegerOutOfRange", expr: "a = 9223372036854775808", err: "out of the range of a 64-bit integer"},
	{name: "NegativeIntegerOutOfRange", expr: "a = -9223372036854775809", err: "out of the range of a 64-bit integer"},
	{name: "DoubleOutOfRange", expr: "a = 1E999", err: "out of the range of a double"},
	{name: "UnrecognizedCharacter", expr: "a = #", err: "Unrecognized character. '#'"},
	{name: "BareAt", expr: "a = @", err: "A parameter name must follow '@'."},
	{name: "LetterAfterNumber", expr: "a = 123abc", err: "Invalid number."},
	{name: "IdentifierStartingWithUnderscore", expr: "_a = 1", err: "Unrecognized character. '_'"},
	{name: "InvalidUTF8", expr: "a = '\xff'", err: ""},
	{name: "InvalidUTF8Outside", expr: "a = \xff", err: "Invalid UTF-8"},
	{name: "NestedTooDeep", expr: strings.Repeat("(", 100) + "1=1" + strings.Repeat(")", 100), err: "nested more than 64 levels deep"},
	{name: "NotTooDeep", expr: strings.Repeat("NOT ", 100) + "1=1", err: "nested more than 64 levels deep"},
	{name: "ActionInFilter", expr: "SET a = 1", err: "unexpected SET"},
	{name: "KeywordAsName", expr: "and = 1", err: "unexpected AND"},
	{name: "UnclosedParenthesis", expr: "(a = 1", err: "expecting ')'"},
	{name: "ExtraClosingParenthesis", expr: "a = 1)", err: "unexpected ')'"},
	{name: "SysWithoutName", expr: "sys. = 1", err: "unexpected '=', expecting IDENTIFIER"},
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range compileErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Compile(tc.expr, tc.params)
			if tc.err == "" {
				// Valid after all: the case documents that it is accepted.
				if err != nil {
					t.Fatalf("Compile(%q): %v", tc.expr, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compile(%q) = %v, want an error containing %q", tc.expr, f, tc.err)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Compile(%q) error = %q, want it to contain %q", tc.expr, err, tc.err)
			}
			if code := core.ErrorCode(err); code != core.EINVALID {
				t.Errorf("error code = %q, want %q", code, core.EINVALID)
			}
		})
	}
}

func TestSyntaxErrorWording(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want string
	}{
		{
			name: "ServiceFormatWithZeroBasedColumn",
			expr: "color = = 1",
			want: "There was an error parsing the SQL expression. [Token line=1, column=8, Token in error==, " +
				"Additional details=syntax error, unexpected '=', expecting a constant, a property, a function or '(']",
		},
		{
			name: "LineAndColumnAfterNewline",
			expr: "color = 'blue'\nAND quantity ! 1",
			want: "There was an error parsing the SQL expression. [Token line=2, column=13, Token in error=!, " +
				"Additional details=Unrecognized character. '!']",
		},
		{
			name: "ColumnCountsCharactersNotBytes",
			expr: "'héllo' = 'x' y",
			want: "There was an error parsing the SQL expression. [Token line=1, column=14, Token in error=y, " +
				"Additional details=syntax error, unexpected IDENTIFIER, expecting AND, OR, or <EOF>]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.expr, nil)
			if err == nil {
				t.Fatalf("Compile(%q) succeeded", tc.expr)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileAcceptsTheLimit(t *testing.T) {
	expr := "a = '" + strings.Repeat("é", MaxExpressionLength-6) + "'"
	if _, err := Compile(expr, nil); err != nil {
		t.Errorf("Compile of a %d-character expression: %v", MaxExpressionLength, err)
	}
}

func TestLongOrChainIsNotTooDeep(t *testing.T) {
	expr := "a = 0" + strings.Repeat(" OR a = 1", 100)
	f := MustCompile(t, expr, nil)
	if got, err := f.Match(&testMessage{user: map[string]any{"a": 1}}); err != nil || !got {
		t.Errorf("Match = %v, %v; want true, nil", got, err)
	}
}
