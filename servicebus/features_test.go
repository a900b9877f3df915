package servicebus_test

import (
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

func TestMaxDeliveryCountDeadLetters(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.MaxDeliveryCount = 2 })
	c := f.sb()
	c.send("q", msg("poison", 0))
	r := c.receiver("q", "", nil)
	for i := 1; i <= 2; i++ {
		got := receive(t, r, 1)
		if len(got) != 1 || got[0].DeliveryCount != uint32(i) {
			t.Fatalf("delivery %d: %v", i, got)
		}
		if err := r.AbandonMessage(ctx(t), got[0], nil); err != nil {
			t.Fatal(err)
		}
	}
	got := receive(t, c.receiver("q", "", dlq()), 1)
	if len(got) != 1 || *got[0].DeadLetterReason != "MaxDeliveryCountExceeded" {
		t.Fatalf("dead letters: %v", names(got))
	}
	if *got[0].DeadLetterErrorDescription != "Message could not be consumed after 2 delivery attempts." {
		t.Fatalf("description %q", *got[0].DeadLetterErrorDescription)
	}
}

func TestDeadLetterSettlementKeepsTheReason(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	c.send("q", msg("bad", 0))
	r := c.receiver("q", "", nil)
	got := receive(t, r, 1)
	if err := r.DeadLetterMessage(ctx(t), got[0], &azservicebus.DeadLetterOptions{Reason: ptr("Invalid"), ErrorDescription: ptr("no such order"),
		PropertiesToModify: map[string]any{"checkedBy": "test"}}); err != nil {
		t.Fatal(err)
	}
	dl := receive(t, c.receiver("q", "", dlq()), 1)
	if len(dl) != 1 || *dl[0].DeadLetterReason != "Invalid" || *dl[0].DeadLetterErrorDescription != "no such order" || dl[0].ApplicationProperties["checkedBy"] != "test" {
		t.Fatalf("dead letter: %+v", dl)
	}
}

func TestReceiveAndDelete(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	c.send("q", msg("a", 0), msg("b", 0))
	r := c.receiver("q", "", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if got := receive(t, r, 2); !slices.Equal(names(got), []string{"a", "b"}) {
		t.Fatalf("received %v", names(got))
	}
	if got := bodies(t, r); len(got) != 0 {
		t.Fatalf("left after receive-and-delete: %v", got)
	}
}

func TestTopicRulesFilterAndAct(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("orders", nil, "all")
	f.MustSubscription("orders", "red", nil)
	if err := f.s.RemoveRule("orders", "red", "$Default"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.AddRule("orders", "red", atom.RuleProperties{Name: "red",
		Filter: atom.Filter{Type: atom.SQLFilter, SQLExpression: "color = 'red' AND quantity > 5"},
		Action: &atom.Action{SQLExpression: "SET sys.Label = 'big-red'; SET seen = TRUE"}}); err != nil {
		t.Fatal(err)
	}
	f.MustSubscription("orders", "corr", nil)
	f.s.RemoveRule("orders", "corr", "$Default")
	if err := f.s.AddRule("orders", "corr", atom.RuleProperties{Name: "c",
		Filter: atom.Filter{Type: atom.CorrelationFilter, Correlation: atom.Correlation{CorrelationID: "k1"}}}); err != nil {
		t.Fatal(err)
	}
	c := f.sb()
	m1 := &azservicebus.Message{Body: []byte("red-10"), ApplicationProperties: map[string]any{"color": "red", "quantity": 10}}
	m2 := &azservicebus.Message{Body: []byte("red-1"), ApplicationProperties: map[string]any{"color": "red", "quantity": 1}}
	m3 := &azservicebus.Message{Body: []byte("k1"), CorrelationID: ptr("k1")}
	c.send("orders", m1, m2, m3)
	if got := bodies(t, c.receiver("orders", "all", nil)); !slices.Equal(got, []string{"red-10", "red-1", "k1"}) {
		t.Fatalf("$Default took %v", got)
	}
	red := receive(t, c.receiver("orders", "red", nil), 10)
	if !slices.Equal(names(red), []string{"red-10"}) || red[0].Subject == nil || *red[0].Subject != "big-red" ||
		red[0].ApplicationProperties["seen"] != true || red[0].ApplicationProperties["RuleName"] != "red" {
		t.Fatalf("SQL rule took %v (%+v)", names(red), red)
	}
	if got := bodies(t, c.receiver("orders", "corr", nil)); !slices.Equal(got, []string{"k1"}) {
		t.Fatalf("correlation rule took %v", got)
	}
}

func TestEachRuleWithAnActionMakesACopy(t *testing.T) {
	f := MustServer(t)
	f.MustTopic("t", nil, "s")
	// $Default (no action) and two more rules without actions make one
	// copy; two rules with actions make one copy each.
	for _, r := range []atom.RuleProperties{
		{Name: "plain1", Filter: atom.Filter{Type: atom.SQLFilter, SQLExpression: "1=1"}},
		{Name: "plain2", Filter: atom.Filter{Type: atom.CorrelationFilter, Correlation: atom.Correlation{Subject: "x"}}},
		{Name: "act1", Filter: atom.Filter{Type: atom.TrueFilter}, Action: &atom.Action{SQLExpression: "SET n = 1"}},
		{Name: "act2", Filter: atom.Filter{Type: atom.TrueFilter}, Action: &atom.Action{SQLExpression: "SET n = 2"}},
	} {
		if err := f.s.AddRule("t", "s", r); err != nil {
			t.Fatal(err)
		}
	}
	c := f.sb()
	c.send("t", &azservicebus.Message{Body: []byte("m"), Subject: ptr("x")})
	got := receive(t, c.receiver("t", "s", nil), 10)
	var rules []any
	for _, m := range got {
		rules = append(rules, m.ApplicationProperties["RuleName"])
	}
	if len(got) != 3 || rules[0] != nil || rules[1] != "act1" || rules[2] != "act2" {
		t.Fatalf("copies: %d with RuleName %v; want 3: the plain one, act1, act2", len(got), rules)
	}
}

func TestAutoForwarding(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("target", nil)
	f.MustQueue("dlqtarget", nil)
	f.MustQueue("in", func(p *atom.QueueProperties) { p.ForwardTo = "target" })
	f.MustQueue("expiring", func(p *atom.QueueProperties) {
		p.DeadLetteringOnMessageExpiration = true
		p.ForwardDeadLetteredMessagesTo = "dlqtarget"
	})
	c := f.sb()
	c.send("in", msg("fwd", 0))
	c.send("expiring", msg("exp", time.Minute))
	if got := bodies(t, c.receiver("target", "", nil)); !slices.Equal(got, []string{"fwd"}) {
		t.Fatalf("ForwardTo target has %v", got)
	}
	f.advance(time.Minute)
	got := receive(t, c.receiver("dlqtarget", "", nil), 1)
	if len(got) != 1 || got[0].DeadLetterSource == nil || *got[0].DeadLetterSource != "expiring" || *got[0].DeadLetterReason != "TTLExpiredException" {
		t.Fatalf("ForwardDeadLetteredMessagesTo target has %+v", got)
	}
	bad := atom.DefaultQueue()
	bad.ForwardTo = "nowhere"
	if err := f.s.CreateQueue("bad", bad); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("ForwardTo an unknown entity: %v, want invalid", err)
	}
}

func TestEntitiesAndMessagesSurviveARestart(t *testing.T) {
	store := core.NewMemStore()
	f := MustServerOn(t, store, t0)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = time.Hour })
	f.MustTopic("t", nil, "s")
	c := f.sb()
	c.send("q", msg("kept", 0))
	c.send("t", msg("copy", 0))
	c.c.Close(ctx(t))
	f.close()
	g := MustServerOn(t, store, t0.Add(time.Minute))
	if got := g.s.Entities(); !slices.Equal(got, []string{"q", "t", "t/Subscriptions/s"}) {
		t.Fatalf("entities after a restart: %v", got)
	}
	d := g.sb()
	if got := names(receive(t, d.receiver("q", "", nil), 1)); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("queue after a restart: %v", got)
	}
	if got := bodies(t, d.receiver("t", "s", nil)); !slices.Equal(got, []string{"copy"}) {
		t.Fatalf("subscription after a restart: %v", got)
	}
	g.advance(time.Hour)
	if got := bodies(t, d.receiver("q", "", nil)); len(got) != 0 {
		t.Fatalf("the restarted queue kept its TTL? %v", got)
	}
}

func TestMessageSizeLimit(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	c := f.sb()
	s, err := c.c.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx(t))
	big := make([]byte, 300*1024)
	err = s.SendMessage(ctx(t), &azservicebus.Message{Body: big}, nil)
	if err == nil {
		t.Fatal("a 300 KB message was accepted with a 256 KB limit")
	}
	b, err := s.NewMessageBatch(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := b.AddMessage(&azservicebus.Message{Body: make([]byte, 1000)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SendMessageBatch(ctx(t), b, nil); err != nil {
		t.Fatal(err)
	}
	if got := bodies(t, c.receiver("q", "", nil)); len(got) != 3 {
		t.Fatalf("a batch of 3 stored %d messages", len(got))
	}
}

func TestDuplicateDetectionDropsARepeatedMessageID(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) {
		p.RequiresDuplicateDetection = true
		p.DuplicateDetectionHistoryTimeWindow = 10 * time.Minute
	})
	f.MustTopic("t", func(p *atom.TopicProperties) { p.RequiresDuplicateDetection = true }, "s")
	c := f.sb()
	m := func(body string) *azservicebus.Message {
		return &azservicebus.Message{Body: []byte(body), MessageID: ptr("order-1")}
	}
	c.send("q", m("first"), m("again"))
	c.send("t", m("first"), m("again"))
	f.advance(10 * time.Minute) // the history window is over
	c.send("q", m("later"))
	if got := bodies(t, c.receiver("q", "", nil)); !slices.Equal(got, []string{"first", "later"}) {
		t.Fatalf("queue: %v, want the repeat within the window dropped", got)
	}
	if got := bodies(t, c.receiver("t", "s", nil)); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("subscription: %v", got)
	}
}

func TestRenewLockKeepsTheMessageLocked(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", func(p *atom.QueueProperties) { p.LockDuration = time.Minute })
	c := f.sb()
	c.send("q", msg("m", 0))
	r := c.receiver("q", "", nil)
	got := receive(t, r, 1)
	if len(got) != 1 || !got[0].LockedUntil.Equal(t0.Add(time.Minute)) {
		t.Fatalf("received %+v", got)
	}
	f.advance(50 * time.Second)
	// rule: SB-7
	if err := r.RenewMessageLock(ctx(t), got[0], nil); err != nil {
		t.Fatal(err)
	}
	if !got[0].LockedUntil.Equal(t0.Add(50*time.Second + time.Minute)) {
		t.Fatalf("renewed until %v, want %v", got[0].LockedUntil, t0.Add(50*time.Second+time.Minute))
	}
	f.advance(50 * time.Second) // past the first lock, within the renewed one
	if err := r.CompleteMessage(ctx(t), got[0], nil); err != nil {
		t.Fatalf("completing within the renewed lock: %v", err)
	}
}
