package cosmos_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"
)

// issue 26.5: azcosmos escapes an item's id in its path (url.PathEscape,
// so '?' is %3F and '+' stays) and signs the id itself; each id the
// service's gateway routes is created (201), read (200), replaced (200,
// read back as v 2), deleted (204) and gone (404), up to the longest id,
// 1023 bytes; one byte more is the service's 400 on create; the ids the
// gateway takes on create but cannot route get its status on read,
// replace and delete (what azcosmos's own emulator tests record).
func TestIssue26_5_ItemIDsThroughAzcosmos(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	body := func(id string, v int) []byte {
		b, _ := json.Marshal(map[string]any{"id": id, "pk": "p", "v": v})
		return b
	}
	ops := func(id string) []int {
		var out []int
		r, err := c.CreateItem(ctx, pk, body(id, 1), nil)
		out = append(out, statusOr(r.RawResponse, err))
		r, err = c.ReadItem(ctx, pk, id, nil)
		out = append(out, statusOr(r.RawResponse, err))
		if err == nil {
			var d struct{ ID string }
			if json.Unmarshal(r.Value, &d) != nil || d.ID != id {
				t.Errorf("id %q read back as %s", id, r.Value)
			}
		}
		r, err = c.ReplaceItem(ctx, pk, id, body(id, 2), nil)
		out = append(out, statusOr(r.RawResponse, err))
		r, err = c.ReadItem(ctx, pk, id, nil)
		var d struct{ V int }
		if err == nil {
			json.Unmarshal(r.Value, &d)
		}
		out = append(out, d.V)
		r, err = c.DeleteItem(ctx, pk, id, nil)
		out = append(out, statusOr(r.RawResponse, err))
		r, err = c.ReadItem(ctx, pk, id, nil)
		return append(out, statusOr(r.RawResponse, err))
	}
	ok := []int{201, 200, 200, 2, 204, 404}
	got, want := map[string][]int{}, map[string][]int{}
	for _, id := range []string{"a?b", "?lead", "trail?", "q?x&y=z+w%", "50% off", "with space", "plus+sign",
		"a=b&c=d", "semi;colon", "ü-nicode 鱀", "WithAllowedSpecial,=.:~+-@()^${}[]!_Chars", strings.Repeat("é", 511) + "x"} {
		got[id], want[id] = ops(id), ok
	}
	// Taken on create, then refused: the gateway's 401 (the signed link
	// and the one it reads differ) or 400 (a control character).
	for _, tc := range []struct {
		id     string
		status int
	}{
		{"Test ", 401}, {"Disallowed/Chars", 401}, {"Disallowed\\Chars", 401}, {"Disallowed#Chars", 401},
		{"Escaped%20", 401}, {"With\tTab", 400},
	} {
		r, err := c.CreateItem(ctx, pk, body(tc.id, 1), nil)
		got[tc.id] = []int{statusOr(r.RawResponse, err)}
		_, err = c.ReadItem(ctx, pk, tc.id, nil)
		got[tc.id] = append(got[tc.id], statusOf(err))
		_, err = c.ReplaceItem(ctx, pk, tc.id, body(tc.id, 2), nil)
		got[tc.id] = append(got[tc.id], statusOf(err))
		_, err = c.DeleteItem(ctx, pk, tc.id, nil)
		got[tc.id] = append(got[tc.id], statusOf(err))
		want[tc.id] = []int{201, tc.status, tc.status, tc.status}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("item ids (-want +got):\n%s", d)
	}

	tooLong := strings.Repeat("é", 512)
	_, err := c.CreateItem(ctx, pk, body(tooLong, 1), nil)
	msg := "The input name '" + tooLong + "' is invalid. Ensure to provide a unique non-empty string less than '1024' characters."
	if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), msg) {
		t.Errorf("create of a 1024-byte id: %v, want 400 %q", err, msg)
	}
}

// statusOr returns the status of a response, or of err when there is one.
func statusOr(resp *http.Response, err error) int {
	if err != nil || resp == nil {
		return statusOf(err)
	}
	return resp.StatusCode
}
