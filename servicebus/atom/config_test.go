package atom_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// testdata/Config.json is the official emulator's sample,
// ServiceBus-Emulator/Config/Config.json of
// Azure/azure-service-bus-emulator-installer (commit 904224e, March 2025),
// comments included.
func TestParseConfigOfficialSample(t *testing.T) {
	data, err := os.ReadFile("testdata/Config.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := atom.ParseConfig(data)
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if len(c.Namespaces) != 1 || c.Namespaces[0].Name != "sbemulatorns" || c.LoggingType != "File" {
		t.Fatalf("ParseConfig = %+v", c)
	}

	queue := atom.DefaultQueue()
	queue.DefaultMessageTimeToLive, queue.DuplicateDetectionHistoryTimeWindow, queue.MaxDeliveryCount = time.Hour, 20*time.Second, 3
	topic := atom.DefaultTopic()
	topic.DefaultMessageTimeToLive, topic.DuplicateDetectionHistoryTimeWindow = time.Hour, 20*time.Second
	sub := func(rule *atom.RuleProperties) *atom.SubscriptionProperties {
		s := atom.DefaultSubscription()
		s.DefaultMessageTimeToLive, s.MaxDeliveryCount, s.DefaultRule = time.Hour, 3, rule
		return &s
	}
	subPath := func(name string) atom.Path {
		return atom.Path{Kind: atom.KindSubscription, Entity: "topic.1", Subscription: name}
	}
	want := []atom.Entry{
		{Path: atom.Path{Kind: atom.KindQueue, Entity: "queue.1"}, Queue: &queue},
		{Path: atom.Path{Kind: atom.KindTopic, Entity: "topic.1"}, Topic: &topic},
		{Path: subPath("subscription.1"), Subscription: sub(&atom.RuleProperties{
			Name: "app-prop-filter-1", Filter: atom.Filter{Type: atom.CorrelationFilter, Correlation: atom.Correlation{ContentType: "application/json"}},
		})},
		{Path: subPath("subscription.2"), Subscription: sub(&atom.RuleProperties{
			Name: "user-prop-filter-1", Filter: atom.Filter{Type: atom.CorrelationFilter, Correlation: atom.Correlation{Properties: map[string]any{"prop1": "value1"}}},
		})},
		{Path: subPath("subscription.3"), Subscription: sub(nil)},
		{Path: subPath("subscription.4"), Subscription: sub(&atom.RuleProperties{
			Name:   "sql-filter-1",
			Filter: atom.Filter{Type: atom.SQLFilter, SQLExpression: "sys.MessageId = '123456' AND userProp1 = 'value1'"},
			Action: &atom.Action{SQLExpression: "SET sys.To = 'Entity'"},
		})},
	}
	if diff := cmp.Diff(want, c.Entries()); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	if n := len(c.Namespaces[0].Topics[0].Subscriptions[0].Rules); n != 1 {
		t.Errorf("subscription.1 has %d rules in the nested form, want 1", n)
	}
}

func TestParseConfigMoreRulesAndTypes(t *testing.T) {
	const cfg = `{
	  "UserConfig": {
	    "Namespaces": [{
	      "Name": "sbemulatorns",
	      "Queues": [{"Name": "q", "Properties": {"lockduration": "PT5S", "RequiresSession": true, "Unknown": [1, 2],
	         "AutoDeleteOnIdle": "00:10:00", "MaxMessageSizeInKilobytes": 1024,}}, {"Name": "bare"}],
	      "Topics": [{
	        "Name": "t",
	        "Subscriptions": [{
	          "Name": "s",
	          "Rules": [
	            {"Name": "a", "Properties": {"FilterType": "sql", "SqlFilter": {"SqlExpression": "x = 1"}}},
	            {"Name": "b", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"Label": "l", "Properties": {"n": 7, "big": 5000000000, "f": 1.5, "ok": true}}}}
	          ]
	        }]
	      }]
	    }],
	    /* block comment */
	    "Logging": {"Type": "Console"}
	  }
	}`
	c, err := atom.ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	q := atom.DefaultQueue()
	q.LockDuration, q.RequiresSession, q.AutoDeleteOnIdle, q.MaxMessageSizeInKilobytes = 5*time.Second, true, 10*time.Minute, 1024
	ruleA := atom.RuleProperties{Name: "a", Filter: atom.Filter{Type: atom.SQLFilter, SQLExpression: "x = 1"}}
	s := atom.DefaultSubscription()
	s.DefaultRule = &ruleA
	want := []atom.Entry{
		{Path: atom.Path{Kind: atom.KindQueue, Entity: "q"}, Queue: &q},
		{Path: atom.Path{Kind: atom.KindQueue, Entity: "bare"}, Queue: new(atom.DefaultQueue())},
		{Path: atom.Path{Kind: atom.KindTopic, Entity: "t"}, Topic: new(atom.DefaultTopic())},
		{Path: atom.Path{Kind: atom.KindSubscription, Entity: "t", Subscription: "s"}, Subscription: &s},
		{Path: atom.Path{Kind: atom.KindRule, Entity: "t", Subscription: "s", Rule: "b"}, Rule: &atom.RuleProperties{
			Name: "b", Filter: atom.Filter{Type: atom.CorrelationFilter, Correlation: atom.Correlation{
				Subject: "l", Properties: map[string]any{"n": int32(7), "big": int64(5000000000), "f": 1.5, "ok": true},
			}},
		}},
	}
	entries := c.Entries()
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	// The entries share nothing with the config.
	entries[3].Subscription.DefaultRule.Name = "changed"
	if c.Entries()[3].Subscription.DefaultRule.Name != "a" {
		t.Error("Entries shares its rules with the Config")
	}
}

func TestParseConfigErrors(t *testing.T) {
	ns := func(body string) string {
		return `{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", ` + body + `}], "Logging": {"Type": "File"}}}`
	}
	tests := []struct {
		name, cfg string
		want      []string // all in the message
	}{
		{"NotJSON", `{`, []string{"Config.json"}},
		{"NoUserConfig", `{"Other": {}}`, []string{"no UserConfig"}},
		{"NamespacesNotArray", `{"UserConfig": {"Namespaces": {}}}`, []string{"Namespaces must be an array"}},
		{"QueueWithoutName", ns(`"Queues": [{"Properties": {}}]`), []string{"queue", "has no Name"}},
		{"BadDuration", ns(`"Queues": [{"Name": "q1", "Properties": {"LockDuration": "1 minute"}}]`), []string{`queue "q1"`, "LockDuration", "ISO 8601"}},
		{"DurationNotString", ns(`"Queues": [{"Name": "q1", "Properties": {"DefaultMessageTimeToLive": 60}}]`), []string{`queue "q1"`, "DefaultMessageTimeToLive"}},
		{"CountNotInteger", ns(`"Queues": [{"Name": "q1", "Properties": {"MaxDeliveryCount": "3"}}]`), []string{`queue "q1"`, "MaxDeliveryCount", "integer"}},
		{"BoolNotBool", ns(`"Topics": [{"Name": "t1", "Properties": {"RequiresDuplicateDetection": "no"}}]`), []string{`topic "t1"`, "RequiresDuplicateDetection", "true or false"}},
		{"SubscriptionBadLock", ns(`"Topics": [{"Name": "t1", "Subscriptions": [{"Name": "s1", "Properties": {"LockDuration": "PTX"}}]}]`), []string{`subscription "s1"`, `topic "t1"`, "LockDuration"}},
		{"UnknownFilterType", ns(`"Topics": [{"Name": "t1", "Subscriptions": [{"Name": "s1", "Rules": [{"Name": "r1", "Properties": {"FilterType": "SqlFilter"}}]}]}]`), []string{`rule "r1"`, `"SqlFilter"`, `"Sql" or "Correlation"`}},
		{"NoFilterType", ns(`"Topics": [{"Name": "t1", "Subscriptions": [{"Name": "s1", "Rules": [{"Name": "r1", "Properties": {}}]}]}]`), []string{`rule "r1"`, "FilterType is missing"}},
		{"SqlWithoutExpression", ns(`"Topics": [{"Name": "t1", "Subscriptions": [{"Name": "s1", "Rules": [{"Name": "r1", "Properties": {"FilterType": "Sql"}}]}]}]`), []string{`rule "r1"`, "SqlExpression is missing"}},
		{"CorrelationPropertyObject", ns(`"Topics": [{"Name": "t1", "Subscriptions": [{"Name": "s1", "Rules": [{"Name": "r1", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"Properties": {"p": {}}}}}]}]}]`), []string{`rule "r1"`, "p must be a string, a number or a boolean"}},
		{"LabelNotString", ns(`"Topics": [{"Name": "t1", "Subscriptions": [{"Name": "s1", "Rules": [{"Name": "r1", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"Label": 1}}}]}]}]`), []string{`rule "r1"`, "Label", "a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := atom.ParseConfig([]byte(tt.cfg))
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("ParseConfig: %v, want EINVALID", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	if data, err := os.ReadFile("testdata/Config.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q",}],/*x*/}]}} // y`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := atom.ParseConfig(data)
		if err == nil {
			_ = c.Entries()
		}
	})
}
