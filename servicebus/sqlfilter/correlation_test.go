package sqlfilter

import (
	"testing"
)

func TestCorrelationMatch(t *testing.T) {
	tests := []struct {
		name   string
		filter *Correlation
		want   bool
	}{
		{name: "EmptyMatchesAll", filter: &Correlation{}, want: true},
		{name: "NilMatchesAll", filter: nil, want: true},
		{name: "DocCorrelationID", filter: &Correlation{CorrelationID: "abc"}, want: true},
		{name: "CorrelationIDDiffers", filter: &Correlation{CorrelationID: "Contoso"}, want: false},
		{name: "CorrelationIDCaseSensitive", filter: &Correlation{CorrelationID: "ABC"}, want: false},
		{name: "DocLabelReplyToColor", filter: &Correlation{Subject: "Store42", ReplyTo: "johndoe@contoso.com", Properties: map[string]any{"color": "blue"}}, want: true},
		{name: "AllSystemFields", filter: &Correlation{CorrelationID: "abc", MessageID: "m-1", To: "Store5", ReplyTo: "johndoe@contoso.com", Subject: "Store42", ContentType: "application/json"}, want: true},
		{name: "OneFieldDiffers", filter: &Correlation{CorrelationID: "abc", To: "Store6"}, want: false},
		{name: "MissingSystemProperty", filter: &Correlation{SessionID: "s"}, want: false},
		{name: "MissingReplyToSessionID", filter: &Correlation{ReplyToSessionID: "s"}, want: false},
		{name: "PropertyIntTypesNormalized", filter: &Correlation{Properties: map[string]any{"quantity": 10}}, want: true},
		{name: "PropertyIntEqualsFloat", filter: &Correlation{Properties: map[string]any{"quantity": 10.0}}, want: true},
		{name: "PropertyValueDiffers", filter: &Correlation{Properties: map[string]any{"quantity": 11}}, want: false},
		{name: "PropertyTypeDiffers", filter: &Correlation{Properties: map[string]any{"quantity": "10"}}, want: false},
		{name: "PropertyMissing", filter: &Correlation{Properties: map[string]any{"urgency": "high"}}, want: false},
		{name: "PropertyNameCaseSensitive", filter: &Correlation{Properties: map[string]any{"Color": "blue"}}, want: false},
		{name: "PropertyNilMatchesNil", filter: &Correlation{Properties: map[string]any{"nothing": nil}}, want: true},
		{name: "PropertyNilDoesNotMatchValue", filter: &Correlation{Properties: map[string]any{"color": nil}}, want: false},
		{name: "PropertyNilDoesNotMatchMissing", filter: &Correlation{Properties: map[string]any{"urgency": nil}}, want: false},
		{name: "PropertyUUIDMatchesText", filter: &Correlation{Properties: map[string]any{"id": "12345678-9abc-def0-1234-56789abcdef0"}}, want: true},
		{name: "PropertyBoolAndTime", filter: &Correlation{Properties: map[string]any{"flag": true, "when": enqueued.Add(3600e9)}}, want: true},
		{name: "PropertiesAllMustMatch", filter: &Correlation{Properties: map[string]any{"color": "blue", "priority": "low"}}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.filter.Match(sample()); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}
