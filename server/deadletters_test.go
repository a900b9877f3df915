package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/dashboard"
)

// rule: SB-8. Through Main and the control API: a message that expired
// into a queue's dead-letter queue is listed by GET /api/deadletters with
// TTLExpiredException and its queue, POST .../resubmit puts it back on the
// queue, where azservicebus finds it; and the data explorer queries a
// Cosmos DB container with POST .../query.
func TestDeadLettersResubmitAndQueryThroughTheControlAPI_SB8(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cosmos.json")
	if err := os.WriteFile(cfg, []byte(cosmosConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	m := MustStart(t, "--clock", "frozen", "--cosmos-config", cfg)
	a := MustAPI(t, m)
	ctx := sbContext(t)

	minute := "PT1M"
	yes := true
	if _, err := MustSBAdmin(t, m).CreateQueue(ctx, "jobs", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		DefaultMessageTimeToLive: &minute, DeadLetteringOnMessageExpiration: &yes}}); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	sb := MustSBClient(t, m)
	MustSBSend(t, sb, "jobs", &azservicebus.Message{Body: []byte("job 1")})
	if got := a.post("/api/clock/advance", `{"by":"2m"}`, nil); got != 200 {
		t.Fatalf("advance: %d", got)
	}

	var dls []dashboard.DeadLetterEntityView
	if got := a.get("/api/deadletters?protocol=servicebus", &dls); got != 200 || len(dls) != 1 || len(dls[0].Items) != 1 {
		t.Fatalf("GET /api/deadletters: %d %+v", got, dls)
	}
	dl := dls[0]
	it := dl.Items[0]
	if dl.Name != "jobs/$DeadLetterQueue" || dl.Source != "jobs" || dl.Count != 1 || it.DeadLetter == nil ||
		it.DeadLetter.Reason != "TTLExpiredException" || it.DeadLetter.Source != "jobs" || it.DeadLetter.Rule != "SB-8" {
		t.Fatalf("dead letters: %+v, item %+v", dl, it.DeadLetter)
	}
	var res map[string]any
	if got := a.post(fmt.Sprintf("/api/entities/servicebus/jobs/$DeadLetterQueue/items/%d/resubmit", it.Seq), "", &res); got != 200 {
		t.Fatalf("resubmit: %d %v", got, res)
	}
	if d := cmp.Diff(map[string]any{"resubmitted": float64(1), "to": "jobs"}, res); d != "" {
		t.Fatalf("resubmit (-want +got):\n%s", d)
	}
	if got := sbPeek(t, sb, "jobs", 0); !slices.Equal(got, []string{"job 1"}) {
		t.Fatalf("jobs after the resubmission: %v", got)
	}
	if got := sbPeek(t, sb, "jobs", azservicebus.SubQueueDeadLetter); len(got) != 0 {
		t.Fatalf("dead letters after the resubmission: %v", got)
	}
	if got := a.get("/api/deadletters", &dls); got != 200 || len(dls) != 0 {
		t.Fatalf("GET /api/deadletters after the resubmission: %d %+v", got, dls)
	}

	carts, _ := MustCosmosClient(t, m).NewContainer("shop", "carts")
	for _, doc := range []string{`{"id":"b","userId":"u2"}`, `{"id":"a","userId":"u1"}`} {
		var d struct {
			UserID string `json:"userId"`
		}
		json.Unmarshal([]byte(doc), &d)
		if _, err := carts.CreateItem(context.Background(), azcosmos.NewPartitionKeyString(d.UserID), []byte(doc), nil); err != nil {
			t.Fatal(err)
		}
	}
	var rows struct {
		Rows  []json.RawMessage `json:"rows"`
		Count int               `json:"count"`
	}
	if got := a.post("/api/entities/cosmos/shop/carts/query", `{"query":"SELECT VALUE c.id FROM c ORDER BY c.id"}`, &rows); got != 200 ||
		rows.Count != 2 || string(rows.Rows[0]) != `"a"` || string(rows.Rows[1]) != `"b"` {
		t.Fatalf("query: %d %s", got, rows.Rows)
	}
	var e map[string]string
	if got := a.post("/api/entities/cosmos/shop/carts/query", `{"query":"SELECT FROM c"}`, &e); got != 400 || e["error"] == "" {
		t.Fatalf("query with a syntax error: %d %v", got, e)
	}
	if got := a.post("/api/entities/servicebus/jobs/query", `{"query":"SELECT 1"}`, &e); got != 404 {
		t.Fatalf("query of a Service Bus queue: %d %v", got, e)
	}
}
