package sqlfilter

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// matchCase is one filter evaluated against sample().
type matchCase struct {
	name   string
	expr   string
	params map[string]any
	want   bool
	err    string // a substring of Match's error; "" for none
}

var matchCases = []matchCase{
	// The articles' and samples' examples.
	{name: "DocColorAndQuantity", expr: "color = 'blue' AND quantity = 10", want: true},
	{name: "DocColorAndQuantityNoSpaces", expr: "color='blue' AND quantity=10", want: true},
	{name: "DocTrueFilter", expr: "1=1", want: true},
	{name: "DocFalseFilter", expr: "1=0", want: false},
	{name: "DocLabelLikePrefix", expr: "sys.Label LIKE 'Store%'", want: true},
	{name: "DocLabelLikeContains", expr: "sys.label LIKE '%ore4%'", want: true},
	{name: "DocLabelLikeNoMatch", expr: "sys.Label LIKE '%bus%'", want: false},
	{name: "DocMessageIdLowerCase", expr: "sys.messageid = 'm-1'", want: true},
	{name: "DocCorrelationIdLike", expr: "sys.correlationid like 'ab%'", want: true},
	{name: "DocCorrelationIdEquals", expr: "sys.CorrelationId = 'abc'", want: true},
	{name: "DocExists", expr: "EXISTS(priority)", want: true},
	{name: "DocExistsMissing", expr: "EXISTS(urgency)", want: false},
	{name: "DocUserScopeIn", expr: "user.color IN ('red','green')", want: false},
	{name: "DocUserScopeInMatch", expr: "user.color IN ('red','blue')", want: true},
	{name: "DocStoreIdIn", expr: "StoreId IN('Store1', 'Store2', 'Store3')", want: true},
	{name: "DocToInOrStoreId", expr: "sys.To IN ('Store5','Store6','Store7') OR StoreId = 'Store8'", want: true},
	{name: "DocNotInOrNotIn", expr: "sys.To NOT IN ('Store1','Store2','Store3','Store4','Store5') OR StoreId NOT IN ('Store1','Store2')", want: false},
	{name: "DocNumericGreater", expr: "quantity > 1", want: true},
	{name: "DocNumericGreaterDecimal", expr: "quantity > 2.08", want: true},
	{name: "DocNumericOr", expr: "quantity = 1 OR price = 2.5", want: true},
	{name: "DocQuotedIdentifier", expr: `"my prop" = 'spaced'`, want: true},
	{name: "DocDelimitedIdentifier", expr: "[my prop] = 'spaced'", want: true},
	{name: "DocSourceParameter", expr: "color = @stringParam", params: map[string]any{"@stringParam": "blue"}, want: true},
	{name: "DocDateTimeParameter", expr: "when > @dtParam", params: map[string]any{"@dtParam": enqueued}, want: true},
	{name: "DocTimeSpanParameter", expr: "(when - sys.EnqueuedTimeUtc) <= @timespan", params: map[string]any{"@timespan": time.Hour}, want: true},
	{name: "DocTimeSpanParameterNoParens", expr: "when - sys.EnqueuedTimeUtc <= @timespan", params: map[string]any{"@timespan": 59 * time.Minute}, want: false},
	{name: "DocEscape", expr: `pct LIKE '50\%' ESCAPE '\'`, want: true},
	{name: "DocEscapeIsLiteral", expr: `color LIKE 'blu\%' ESCAPE '\'`, want: false},

	// Comparison operators.
	{name: "EqualsString", expr: "color = 'blue'", want: true},
	{name: "EqualsIsCaseSensitive", expr: "color = 'BLUE'", want: false},
	{name: "NotEqualsAngle", expr: "color <> 'red'", want: true},
	{name: "NotEqualsBang", expr: "color != 'blue'", want: false},
	{name: "Greater", expr: "quantity > 10", want: false},
	{name: "GreaterOrEqual", expr: "quantity >= 10", want: true},
	{name: "Less", expr: "quantity < 11", want: true},
	{name: "LessOrEqual", expr: "quantity <= 9", want: false},
	{name: "IntEqualsFloat", expr: "quantity = 10.0", want: true},
	{name: "FloatLessInt", expr: "price < 3", want: true},
	{name: "Float32Normalized", expr: "ratio = 0.5", want: true},
	{name: "Uint8Normalized", expr: "small = 3", want: true},
	{name: "HugeUint64BecomesFloat", expr: "huge > 9223372036854775807", want: false},
	{name: "HugeUint64EqualsDouble", expr: "huge = 9.223372036854775808E18", want: true},
	{name: "BoolEqualsTrue", expr: "flag = TRUE", want: true},
	{name: "BoolKeywordLowerCase", expr: "flag = true", want: true},
	{name: "BoolNotEqualsFalse", expr: "flag <> false", want: true},
	{name: "SysIntProperty", expr: "sys.DeliveryCount = 1 AND sys.SequenceNumber > 40", want: true},
	{name: "SysTimeToLive", expr: "sys.TimeToLive = @ttl", params: map[string]any{"ttl": time.Hour}, want: true},
	{name: "SubjectIsLabel", expr: "sys.Subject = 'Store42'", want: true},
	{name: "SysScopeUpperCase", expr: "SYS.LABEL = 'Store42'", want: true},
	{name: "TimeCompare", expr: "sys.EnqueuedTimeUtc < when", want: true},
	{name: "DurationCompare", expr: "span > @h", params: map[string]any{"h": time.Hour}, want: true},
	{name: "UUIDEqualsText", expr: "id = '12345678-9abc-def0-1234-56789abcdef0'", want: true},
	{name: "UUIDEqualsUpperBracedText", expr: "id = '{12345678-9ABC-DEF0-1234-56789ABCDEF0}'", want: true},
	{name: "UUIDNotEqualsOtherText", expr: "id <> 'not-a-uuid'", want: true},
	{name: "NaNNotEqual", expr: "0.0/0.0 = 0.0/0.0", want: false},
	{name: "NaNUnequal", expr: "0.0/0.0 <> 0.0/0.0", want: true},

	// Arithmetic and precedence.
	{name: "MultiplicationBeforeAddition", expr: "1 + 2 * 3 = 7", want: true},
	{name: "ParenthesesFirst", expr: "(1 + 2) * 3 = 9", want: true},
	{name: "SubtractionLeftAssociative", expr: "10 - 4 - 3 = 3", want: true},
	{name: "DivisionLeftAssociative", expr: "100 / 10 / 5 = 2", want: true},
	{name: "IntegerDivisionTruncates", expr: "7 / 2 = 3", want: true},
	{name: "NegativeIntegerDivisionTruncates", expr: "-7 / 2 = -3", want: true},
	{name: "FloatDivision", expr: "7 / 2.0 = 3.5", want: true},
	{name: "Modulo", expr: "quantity % 3 = 1", want: true},
	{name: "NegativeModulo", expr: "negative % 4 = -3", want: true},
	{name: "FloatModulo", expr: "5.5 % 2 = 1.5", want: true},
	{name: "UnaryMinus", expr: "-quantity = -10", want: true},
	{name: "UnaryMinusBindsTighter", expr: "-2 * -3 = 6", want: true},
	{name: "DoubleUnaryMinus", expr: "- -quantity = 10", want: true},
	{name: "UnaryPlus", expr: "+quantity = 10", want: true},
	{name: "PropertyArithmetic", expr: "quantity * price = 25", want: true},
	{name: "ApproximateNumber", expr: "1.2E3 = 1200", want: true},
	{name: "ApproximateNumberNegativeExponent", expr: "0.5E-2 = 0.005", want: true},
	{name: "DocApproximateNumber", expr: "101.5E5 = 10150000", want: true},
	{name: "MinInt64Literal", expr: "-9223372036854775808 < 0", want: true},
	{name: "StringConcatenation", expr: "color + '-' + priority = 'blue-high'", want: true},
	{name: "StringPlusNumberConcatenates", expr: "'n' + quantity = 'n10'", want: true},
	{name: "TimePlusDuration", expr: "sys.EnqueuedTimeUtc + span > when", want: true},
	{name: "ArithmeticWithMissingIsUnknown", expr: "missing + 1 = 1", want: false},
	{name: "NotOfUnknownArithmetic", expr: "NOT (missing + 1 = 1)", want: false},

	// Three-valued logic.
	{name: "MissingEqualsIsUnknown", expr: "missing = 1", want: false},
	{name: "MissingNotEqualsIsUnknown", expr: "missing <> 1", want: false},
	{name: "NotUnknownIsUnknown", expr: "NOT (missing = 1)", want: false},
	{name: "UnknownAndFalseIsFalse", expr: "NOT (missing = 1 AND 1 = 0)", want: true},
	{name: "UnknownAndTrueIsUnknown", expr: "NOT (missing = 1 AND 1 = 1)", want: false},
	{name: "UnknownOrTrueIsTrue", expr: "missing = 1 OR 1 = 1", want: true},
	{name: "UnknownOrFalseIsUnknown", expr: "NOT (missing = 1 OR 1 = 0)", want: false},
	{name: "NilValueIsUnknown", expr: "nothing = 1 OR nothing <> 1", want: false},
	{name: "NullConstantIsUnknown", expr: "color = NULL", want: false},
	{name: "NotNotTrue", expr: "NOT NOT color = 'blue'", want: true},
	{name: "NotBindsTighterThanAnd", expr: "NOT color = 'red' AND quantity = 10", want: true},
	{name: "AndBindsTighterThanOr", expr: "1 = 1 OR 1 = 0 AND 1 = 0", want: true},
	{name: "ParenthesizedOr", expr: "(1 = 1 OR 1 = 0) AND 1 = 0", want: false},
	{name: "AndShortCircuitsErrors", expr: "1 = 0 AND 1 / 0 = 1", want: false},
	{name: "OrShortCircuitsErrors", expr: "1 = 1 OR 1 / 0 = 1", want: true},
	{name: "TrueConstantFilter", expr: "TRUE", want: true},
	{name: "FalseConstantFilter", expr: "FALSE", want: false},
	{name: "KeywordsCaseInsensitive", expr: "not color = 'red' and (quantity in (10) or exists(x)) AND sys.Label Like 'S%' and nothing is null", want: true},

	// IS NULL and EXISTS.
	{name: "IsNullMissing", expr: "missing IS NULL", want: true},
	{name: "IsNullNilValue", expr: "nothing IS NULL", want: true},
	{name: "IsNullPresent", expr: "color IS NULL", want: false},
	{name: "IsNotNullPresent", expr: "color IS NOT NULL", want: true},
	{name: "IsNotNullMissing", expr: "missing IS NOT NULL", want: false},
	{name: "IsNullOpaque", expr: "opaque IS NOT NULL", want: true},
	{name: "SysIsNullUnset", expr: "sys.SessionId IS NULL", want: true},
	{name: "ExistsNilValue", expr: "EXISTS(nothing)", want: true},
	{name: "ExistsSys", expr: "EXISTS(sys.Label) AND NOT EXISTS(sys.SessionId)", want: true},
	{name: "ExistsDelimited", expr: "EXISTS([my prop])", want: true},
	{name: "UserPropertyNamesCaseInsensitive", expr: "EXISTS(Color) AND COLOR = 'blue'", want: true},
	{name: "SysDelimitedName", expr: "sys.[label] = 'Store42' AND user.[my prop] = 'spaced'", want: true},
	{name: "DelimitedKeywordName", expr: "[Not] = 'keyword-named'", want: true},

	// IN.
	{name: "InNumbers", expr: "quantity IN (1, 5, 10)", want: true},
	{name: "InMixedNumericTypes", expr: "quantity IN (1.5, 10.0)", want: true},
	{name: "NotIn", expr: "quantity NOT IN (1, 5)", want: true},
	{name: "NotInMatch", expr: "quantity NOT IN (10)", want: false},
	{name: "InWithExpressions", expr: "quantity IN (5 + 5)", want: true},
	{name: "InMissingLeftIsUnknown", expr: "NOT (missing IN (1, 2))", want: false},
	{name: "NotInMissingLeftIsUnknown", expr: "missing NOT IN (1, 2)", want: false},
	{name: "InOtherTypesNotEqual", expr: "quantity IN ('10', TRUE)", want: false},
	{name: "InNullItemNotEqual", expr: "color IN (NULL, 'blue')", want: true},
	{name: "NotInNullItem", expr: "color NOT IN (NULL)", want: true},
	{name: "InParameter", expr: "color IN (@a, @b)", params: map[string]any{"a": "red", "b": "blue"}, want: true},

	// LIKE.
	{name: "LikeUnderscore", expr: "color LIKE 'bl_e'", want: true},
	{name: "LikeUnderscoreOneCharacter", expr: "color LIKE 'bl_'", want: false},
	{name: "LikePercentEmpty", expr: "color LIKE 'blue%'", want: true},
	{name: "LikeOnlyPercent", expr: "color LIKE '%'", want: true},
	{name: "LikeCaseSensitive", expr: "color LIKE 'BLUE'", want: false},
	{name: "LikeBacktracks", expr: "sys.ReplyTo LIKE '%o%@%.com'", want: true},
	{name: "NotLike", expr: "color NOT LIKE 'r%'", want: true},
	{name: "NotLikeMatch", expr: "color NOT LIKE 'b%'", want: false},
	{name: "LikeEscapedUnderscore", expr: "'a_c' LIKE 'a!_c' ESCAPE '!'", want: true},
	{name: "LikeEscapedUnderscoreLiteral", expr: "'abc' LIKE 'a!_c' ESCAPE '!'", want: false},
	{name: "LikeEscapeEscapesItself", expr: `'a\b' LIKE 'a\\b' ESCAPE '\'`, want: true},
	{name: "LikeRegexCharactersLiteral", expr: "'a.c' LIKE 'a.c' AND NOT 'abc' LIKE 'a.c'", want: true},
	{name: "LikeNumberAsText", expr: "quantity LIKE '1%'", want: true},
	{name: "LikeMissingIsUnknown", expr: "NOT (missing LIKE 'a%')", want: false},
	{name: "LikeNullPatternIsUnknown", expr: "NOT (color LIKE NULL)", want: false},
	{name: "LikeComputedPattern", expr: "color LIKE priority + '%' OR color LIKE 'b' + '%'", want: true},
	{name: "LikeComputedEscape", expr: "pct LIKE @p ESCAPE @e", params: map[string]any{"p": "50#%", "e": "#"}, want: true},
	{name: "LikeUnicode", expr: "'héllo' LIKE 'h_llo'", want: true},
	{name: "LikeMultiline", expr: "multi LIKE 'line1%line2'", want: true},
	{name: "LikeParameterPattern", expr: "sys.Label LIKE @prefix", params: map[string]any{"@Prefix": "Store%"}, want: true},

	// Functions.
	{name: "NewIDIsNotNull", expr: "newid() IS NOT NULL", want: true},
	{name: "NewIDDiffers", expr: "NEWID() <> newid()", want: true},
	{name: "PropertyFunction", expr: "property('color') = 'blue'", want: true},
	{name: "PFunctionComputedName", expr: "p('col' + 'or') = 'blue'", want: true},
	{name: "PropertyFunctionMissing", expr: "p('nope') IS NULL", want: true},
	{name: "PAsPropertyName", expr: "p IS NULL", want: true},

	// Runtime errors, as the broker's binder raises them.
	{name: "StringEqualsNumberIsError", expr: "color = 1", err: "Operator '==' cannot be applied to operands of type 'string' and 'long'"},
	{name: "StringLessIsError", expr: "color < 'z'", err: "Operator '<' cannot be applied to operands of type 'string' and 'string'"},
	{name: "BoolGreaterIsError", expr: "flag > FALSE", err: "Operator '>' cannot be applied to operands of type 'bool' and 'bool'"},
	{name: "NotEqualsSpelledCSharp", expr: "flag <> 1", err: "Operator '!=' cannot be applied to operands of type 'bool' and 'long'"},
	{name: "IntegerDivisionByZero", expr: "quantity / 0 = 1", err: "Attempted to divide by zero."},
	{name: "IntegerModuloByZero", expr: "quantity % 0 = 1", err: "Attempted to divide by zero."},
	{name: "FloatDivisionByZeroIsInfinity", expr: "price / 0 > 1000000", want: true},
	{name: "AdditionOverflow", expr: "9223372036854775807 + 1 > 0", err: "Arithmetic operation resulted in an overflow."},
	{name: "MultiplicationOverflow", expr: "4611686018427387904 * 2 > 0", err: "overflow"},
	{name: "NegationOverflow", expr: "-(-9223372036854775808) > 0", err: "overflow"},
	{name: "DivisionOverflow", expr: "-9223372036854775808 / -1 > 0", err: "overflow"},
	{name: "SubtractionOverflow", expr: "-9223372036854775808 - 1 < 0", err: "overflow"},
	{name: "UnaryMinusOnString", expr: "-color = 1", err: "Operator '-' cannot be applied to operand of type 'string'"},
	{name: "BoolArithmetic", expr: "flag + 1 = 2", err: "Operator '+' cannot be applied to operands of type 'bool' and 'long'"},
	{name: "TimeEqualsStringIsError", expr: "when = '2024-05-06'", err: "'System.DateTime' and 'string'"},
	{name: "UUIDOrderIsError", expr: "id < 'a'", err: "'System.Guid' and 'string'"},
	{name: "OpaqueComparisonIsError", expr: "opaque = 1", err: "cannot be applied"},
	{name: "ErrorInLaterOrOperand", expr: "1 = 0 OR color = 1", err: "cannot be applied"},
}

func TestMatch(t *testing.T) {
	for _, tc := range matchCases {
		t.Run(tc.name, func(t *testing.T) {
			f := MustCompile(t, tc.expr, tc.params)
			got, err := f.Match(sample())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Match(%q) = %v, %v; want error containing %q", tc.expr, got, err, tc.err)
				}
				if code := core.ErrorCode(err); code != core.EINVALID {
					t.Errorf("error code = %q, want %q", code, core.EINVALID)
				}
				return
			}
			if err != nil {
				t.Fatalf("Match(%q): %v", tc.expr, err)
			}
			if got != tc.want {
				t.Errorf("Match(%q) = %v, want %v", tc.expr, got, tc.want)
			}
		})
	}
}

func TestFilterStringIsTheExpression(t *testing.T) {
	const expr = "  color = 'blue'  "
	if diff := cmp.Diff(expr, MustCompile(t, expr, nil).String()); diff != "" {
		t.Errorf("String() mismatch (-want +got):\n%s", diff)
	}
}

func TestMatchMissingSystemPropertyIsUnknown(t *testing.T) {
	f := MustCompile(t, "sys.ReplyToSessionId = 'x' OR NOT sys.ReplyToSessionId = 'x'", nil)
	if got, err := f.Match(&testMessage{}); err != nil || got {
		t.Errorf("Match on an empty message = %v, %v; want false, nil", got, err)
	}
}

func TestMatchDoesNotAllocateForIntegers(t *testing.T) {
	f := MustCompile(t, "quantity * 1000 + 7 > 500 AND sys.SequenceNumber IN (41, 42) AND color LIKE 'b%'", nil)
	m := sample()
	m.user["quantity"] = int64(100000)
	allocs := testing.AllocsPerRun(100, func() {
		if ok, err := f.Match(m); !ok || err != nil {
			t.Fatalf("Match = %v, %v", ok, err)
		}
	})
	// Reading int64 out of the map's interfaces allocates nothing; the
	// evaluator must not add to that.
	if allocs > 0 {
		t.Errorf("Match allocates %v times per run, want 0", allocs)
	}
}

func BenchmarkMatch(b *testing.B) {
	f := MustCompile(b, "color = 'blue' AND quantity > 5 AND sys.Label LIKE 'Store%' AND priority IN ('high', 'low')", nil)
	m := sample()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := f.Match(m); !ok || err != nil {
			b.Fatalf("Match = %v, %v", ok, err)
		}
	}
}
