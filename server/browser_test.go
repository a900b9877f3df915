package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/chromedp/chromedp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// screenshotsEnv names the folder the browser test saves its screenshots
// in (a fresh temporary folder when unset); .ci/run keeps them as
// artifacts.
const screenshotsEnv = "LAPSE_SCREENSHOTS"

// mustChromium returns the path of Debian's chromium (or another Chrome).
func mustChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	// In CI (.ci/run installs chromium) a missing browser is a failure.
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH and CI is set: install Debian's chromium (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); with CI set this is a failure")
	return ""
}

// browser drives one headless chromium tab and saves screenshots.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
}

func mustBrowser(t *testing.T, base string) *browser {
	t.Helper()
	chrome := mustChromium(t)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox, // CI runs as root, where chromium's sandbox cannot start
		chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	if err := chromedp.Run(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", chrome, err)
	}
	t.Logf("screenshots go to %s", dir)
	return &browser{t: t, ctx: ctx, base: base, dir: dir}
}

// on returns the browser for subtest t.
func (b *browser) on(t *testing.T) *browser {
	c := *b
	c.t = t
	return &c
}

// run runs actions, failing the test with what it was doing.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var body string
		_ = chromedp.Run(b.ctx, chromedp.Text("body", &body, chromedp.ByQuery))
		b.t.Fatalf("%s: %v\npage text:\n%s", what, err, body)
	}
}

// open loads a page and waits for its main part.
func (b *browser) open(path string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible("main.page", chromedp.ByQuery))
}

// waitJS waits until a JavaScript expression is true.
func (b *browser) waitJS(what, expr string) {
	b.t.Helper()
	b.run("wait for "+what, chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(20*time.Second)))
}

// waitNavigated waits until the page at path has loaded, after an action
// of the page took the browser there: while it navigates, the old page's
// JavaScript context is gone and a poll of it fails, so the location is
// read again until it is path.
func (b *browser) waitNavigated(path string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var loc string
		err := chromedp.Run(b.ctx, chromedp.Evaluate(`document.readyState === "complete" ? location.pathname : ""`, &loc))
		if err == nil && loc == path {
			b.run("wait for "+path, chromedp.WaitVisible("main.page", chromedp.ByQuery))
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("the browser did not reach %s: at %q (%v)", path, loc, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shot saves a screenshot of the whole page as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	var png []byte
	b.run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// markPage marks the page's window; notReloaded checks the mark is still
// there, so that what appeared came without a reload.
func (b *browser) markPage() {
	b.t.Helper()
	b.run("mark the page", chromedp.Evaluate(`window.lapseTestMark = 1`, nil))
}

func (b *browser) notReloaded() {
	b.t.Helper()
	var mark bool
	b.run("read the page mark", chromedp.Evaluate(`window.lapseTestMark === 1`, &mark))
	if !mark {
		b.t.Fatal("the page was reloaded; it must update live")
	}
}

// js quotes s for a JavaScript expression.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// textIn is a JavaScript expression that is true when the element sel
// holds text.
func textIn(sel, text string) string {
	return fmt.Sprintf(`(document.querySelector(%s) || {textContent: ""}).textContent.includes(%s)`, js(sel), js(text))
}

// TestDashboardInBrowser drives the dashboard in Debian's chromium: the
// official SDKs of the three protocols create entities and items, the
// pages show them with their expiry and the rule behind it, a click on the
// clock expires them and the expiry events and the dead letter appear
// without a reload, a dead letter is resubmitted from the page and
// azservicebus receives it again. Each page is saved as a screenshot.
// rule: EM-1, EM-2, SB-2, SB-8, RB-1, RB-9, CO-4
func TestDashboardInBrowser(t *testing.T) {
	mustChromium(t) // skip or fail before starting anything
	m := MustStart(t, "--clock", "frozen")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Service Bus: a queue whose messages live 10 minutes and are
	// dead-lettered on expiry; a message asking for 20 minutes (SB-2).
	ad := MustSBAdmin(t, m)
	tenMin, yes := "PT10M", true
	if _, err := ad.CreateQueue(ctx, "orders", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		DefaultMessageTimeToLive: &tenMin, DeadLetteringOnMessageExpiration: &yes}}); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	// A topic whose subscription keeps messages 5 minutes (SB-5).
	if _, err := ad.CreateTopic(ctx, "events", nil); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	fiveMin := "PT5M"
	if _, err := ad.CreateSubscription(ctx, "events", "audit", &admin.CreateSubscriptionOptions{Properties: &admin.SubscriptionProperties{
		DefaultMessageTimeToLive: &fiveMin}}); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	sb := MustSBClient(t, m)
	MustSBSend(t, sb, "events", &azservicebus.Message{Body: []byte("user signed in")})
	twenty := 20 * time.Minute
	MustSBSend(t, sb, "orders", &azservicebus.Message{Body: []byte(`{"order":42}`), TimeToLive: &twenty, MessageID: to("order-42")})

	// RabbitMQ: a queue with a one-minute TTL dead-lettering to jobs.dead.
	conn, err := amqp.Dial("amqp://guest:guest@" + dialable(m.amqp.Addr().String()) + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ch.ExchangeDeclare("dlx", "fanout", true, false, false, false, nil))
	_, err = ch.QueueDeclare("jobs.dead", true, false, false, false, nil)
	must(err)
	must(ch.QueueBind("jobs.dead", "", "dlx", false, nil))
	_, err = ch.QueueDeclare("jobs", true, false, false, false, amqp.Table{"x-message-ttl": int32(60000), "x-dead-letter-exchange": "dlx"})
	must(err)
	must(ch.Confirm(false))
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "jobs", false, false, amqp.Publishing{Body: []byte("resize image 7"), ContentType: "text/plain"})
	must(err)
	if ok, err := dc.WaitContext(ctx); !ok || err != nil {
		t.Fatalf("publish not confirmed: %v", err)
	}

	// Cosmos DB: a container whose items live an hour (CO-4).
	cc := MustCosmosClient(t, m)
	_, err = cc.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil)
	must(err)
	db, err := cc.NewDatabase("shop")
	must(err)
	hour := int32(3600)
	_, err = db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "carts", DefaultTimeToLive: &hour,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/userId"}}}, nil)
	must(err)
	carts, err := db.NewContainer("carts")
	must(err)
	for i, user := range []string{"ann", "bob", "cy"} {
		doc := fmt.Sprintf(`{"id":"cart-%d","userId":%q,"items":%d}`, i+1, user, i+2)
		_, err := carts.CreateItem(ctx, azcosmos.NewPartitionKeyString(user), []byte(doc), nil)
		must(err)
	}

	b0 := mustBrowser(t, controlURL(m))
	// Each step is a subtest driving the one browser tab; the first that
	// fails ends the test, since the next ones build on it.
	step := func(name string, fn func(t *testing.T, b *browser)) {
		t.Helper()
		if !t.Run(name, func(t *testing.T) { fn(t, b0.on(t)) }) {
			t.FailNow()
		}
	}

	step("Overview", func(t *testing.T, b *browser) {
		b.open("/")
		b.waitJS("the three protocols", textIn("#proto-servicebus", "orders")+" && "+textIn("#proto-rabbitmq", "jobs.dead")+" && "+textIn("#proto-cosmos", "carts"))
		b.waitJS("one active order", textIn(`tr[data-entity="servicebus:orders"] td:nth-child(3)`, "1"))
		// The subscription is shown under its topic, with its copy.
		b.waitJS("the subscription under its topic", textIn(`tr.depth-1[data-entity="servicebus:events/Subscriptions/audit"]`, "Subscriptions/audit")+
			" && "+textIn(`tr[data-entity="servicebus:events/Subscriptions/audit"] td:nth-child(3)`, "1"))
		// issue 15.14: the amq.* exchanges fold away until asked for.
		b.waitJS("the amq.* exchanges folded", `!document.querySelector('tr[data-entity^="rabbitmq:exchange:/amq."]') && `+textIn("#show-builtin", "Show them"))
		b.shot("01-overview")
	})
	step("EntityPage", func(t *testing.T, b *browser) {
		b.open("/entity?protocol=servicebus&name=orders")
		b.waitJS("the policy in Service Bus words", textIn(".settings", "DefaultMessageTimeToLive"))
		b.waitJS("the rule behind the expiry", textIn("table.items", "SB-2")+" && "+textIn("table.items", "cut to"))
		b.waitJS("a countdown", textIn("table.items .due", "in 10m"))
		b.shot("02-entity-servicebus-queue")
		b.open("/entity?protocol=rabbitmq&name=" + "%2Fjobs")
		b.waitJS("x-message-ttl", textIn(".settings", "x-message-ttl"))
		b.shot("03-entity-rabbitmq-queue")
	})
	step("Timeline", func(t *testing.T, b *browser) {
		b.open("/timeline?range=1h")
		b.waitJS("the plot", `document.querySelectorAll("svg.plot rect").length >= 2`)
		b.shot("04-timeline")
	})
	step("Explorer", func(t *testing.T, b *browser) {
		b.open("/explorer?protocol=cosmos&name=shop%2Fcarts")
		b.run("run a query",
			chromedp.SetValue("#query-text", "SELECT c.id, c.userId, c.items FROM c ORDER BY c.items DESC", chromedp.ByQuery),
			chromedp.Click("#query-run", chromedp.ByQuery))
		b.waitJS("three rows", textIn("#query-count", "3 rows")+` && document.querySelector("pre.row").textContent.includes("cart-3")`)
		b.shot("05-explorer")
	})
	step("ExpiryEventAppearsLive", func(t *testing.T, b *browser) {
		// rule: RB-1, RB-9: one minute later the job is dead-lettered.
		b.open("/events")
		b.waitJS("the empty log", textIn("#events", "No events"))
		b.markPage()
		b.run("click +1m", chromedp.Click(`button[data-advance="1m"]`, chromedp.ByQuery))
		b.waitJS("the dead-letter event", textIn("#events", "dead-lettered")+" && "+textIn("#events", "/jobs")+" && "+textIn("#events", "RB-"))
		b.notReloaded()
		b.shot("06-events")
	})
	step("DeadLetterAppearsLive", func(t *testing.T, b *browser) {
		// rule: SB-8: ten minutes after it was sent, the order is dead-lettered.
		b.open("/deadletters")
		b.waitJS("the job's dead letter", textIn("#deadletters", "resize image 7")+" && "+textIn("#deadletters", "expired"))
		b.markPage()
		b.run("advance 9m from the form",
			chromedp.SetValue("#advance-by", "9m", chromedp.ByQuery),
			chromedp.Click("#advance-go", chromedp.ByQuery))
		b.waitJS("the order's dead letter", textIn("#deadletters", "TTLExpiredException")+" && "+textIn("#deadletters", "order"))
		b.notReloaded()
		b.shot("07-deadletters")

		b.run("resubmit the order", chromedp.Click(`#deadletters tr[data-protocol="servicebus"] button[data-post$="/resubmit"]`, chromedp.ByQuery))
		b.waitJS("the order gone from the dead letters", "!"+textIn("#deadletters", "TTLExpiredException"))
		b.notReloaded()
	})
	step("ResubmittedMessageIsReceived", func(t *testing.T, b *browser) {
		rc, err := sb.NewReceiverForQueue("orders", nil)
		must(err)
		defer rc.Close(ctx)
		msgs, err := rc.ReceiveMessages(ctx, 1, nil)
		must(err)
		if len(msgs) != 1 || string(msgs[0].Body) != `{"order":42}` {
			t.Fatalf("received %d messages after the resubmit", len(msgs))
		}
		must(rc.CompleteMessage(ctx, msgs[0], nil))
	})
	step("CosmosItemsExpire", func(t *testing.T, b *browser) {
		// rule: CO-4: an hour after their last write the carts are gone.
		b.open("/entity?protocol=cosmos&name=shop%2Fcarts")
		b.waitJS("three carts", `document.querySelectorAll("table.items > tbody > tr").length === 3`)
		b.markPage()
		b.run("click +1h", chromedp.Click(`button[data-advance="1h"]`, chromedp.ByQuery))
		b.waitJS("no carts", textIn("#items", "No items"))
		b.notReloaded()
		b.open("/events?protocol=cosmos")
		b.waitJS("three expiries", `document.querySelectorAll("#events tr.a-expired").length === 3`)
		b.open("/")
		b.shot("08-overview-after")
	})
	step("ClockControls", func(t *testing.T, b *browser) {
		// rule: EM-1: resume lets time run from where it stands, ahead of
		// the wall (offset); freeze stops it again.
		b.open("/")
		// issue 15.14: the clock box shows its whole placeholder.
		b.waitJS("the placeholder fitting its box", `(() => {
			const i = document.getElementById("advance-by"), st = getComputedStyle(i);
			const c = document.createElement("canvas").getContext("2d");
			c.font = st.font;
			return c.measureText(i.placeholder).width <= i.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
		})()`)
		b.run("click resume", chromedp.Click("#clock-resume", chromedp.ByQuery))
		b.waitJS("the clock running", textIn("#clock-mode", "offset"))
		b.run("click freeze", chromedp.Click("#clock-freeze", chromedp.ByQuery))
		b.waitJS("the clock frozen", textIn("#clock-mode", "frozen"))
	})
	step("Rules", func(t *testing.T, b *browser) {
		b.open("/rules#SB-8")
		b.waitJS("rule SB-8", textIn("#SB-8", "TTLExpiredException"))
		b.shot("09-rules")
	})
	step("SandboxPicker", func(t *testing.T, b *browser) {
		// issue 29.4: the picker lists the sandboxes; choosing one opens
		// the same page of that world, with its own clock and entities,
		// and its clock buttons move its clock only.
		box := mustSandbox(t, m, `{"time":"2031-02-03T04:05:06Z","cosmosConfig":{"databases":[{"id":"boxdb","containers":[{"id":"only-here","partitionKey":"/pk"}]}]}}`)
		before := m.Clock.Now()
		b.open("/")
		b.waitJS("the picker with the sandbox", `!document.getElementById("world-picker").hidden && [...document.querySelectorAll("#world option")].some(o => o.value === "/sandboxes/`+box.ID+`/")`)
		// SetValue dispatches the change event itself; a second one,
		// sent after it, could land in the page it navigates to before
		// that page has a picker.
		b.run("choose the sandbox", chromedp.SetValue("#world", "/sandboxes/"+box.ID+"/", chromedp.ByQuery))
		b.waitNavigated("/sandboxes/" + box.ID + "/")
		b.waitJS("the sandbox's overview", `document.body.textContent.includes("only-here") && document.getElementById("clock-now").textContent.includes("2031")`)
		b.shot("10-sandbox")
		b.run("click +1h", chromedp.Click(`button[data-advance="1h"]`, chromedp.ByQuery))
		b.waitJS("the sandbox's clock an hour on", textIn("#clock-now", "2031-02-03 05:05"))
		if !m.Clock.Now().Equal(before) {
			t.Fatalf("the sandbox's +1h moved the default world's clock from %v to %v", before, m.Clock.Now())
		}
	})
}

func to(s string) *string { return &s }
