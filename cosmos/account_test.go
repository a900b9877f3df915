package cosmos_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
)

// account is what GET / says of the database account.
type account struct {
	ID                           string `json:"id"`
	RID                          string `json:"_rid"`
	DBs                          string `json:"_dbs"`
	WritableLocations            []location
	ReadableLocations            []location
	EnableMultipleWriteLocations bool
	UserConsistencyPolicy        struct{ DefaultConsistencyLevel string }
	QueryEngineConfiguration     string
}

type location struct {
	Name                    string
	DatabaseAccountEndpoint string
}

// readAccount reads GET / with Host header host.
func (f *fixture) readAccount(host string) account {
	f.tb.Helper()
	got := f.raw("GET", "/", "", "", nil, map[string]string{"Host": host})
	var a account
	if got.status != http.StatusOK || json.Unmarshal(got.body, &a) != nil {
		f.tb.Fatalf("GET / with Host %s: %d %s", host, got.status, got.body)
	}
	return a
}

func TestAccountIsTheOfficialEmulators(t *testing.T) {
	// issue 13.11: the account reads as the official emulator's: the
	// account "localhost", one region "South Central US" for reads and
	// writes at the host and port the client used (localhost as 127.0.0.1,
	// as the emulator names itself), single-region writes, Session
	// consistency unless configured otherwise.
	f := MustServer(t)
	_, port, _ := net.SplitHostPort(f.s.Addr().String())
	for _, c := range []struct{ host, endpoint string }{
		{"localhost:" + port, "http://127.0.0.1:" + port + "/"},
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port + "/"},
		{"LocalHost:8081", "http://127.0.0.1:8081/"},
		// A compose service name, a port mapped elsewhere: as the client
		// used them.
		{"lapse:18081", "http://lapse:18081/"},
	} {
		got := f.readAccount(c.host)
		want := []location{{Name: "South Central US", DatabaseAccountEndpoint: c.endpoint}}
		if d := cmp.Diff(want, got.WritableLocations); d != "" {
			t.Errorf("Host %s: writableLocations (-want +got):\n%s", c.host, d)
		}
		if d := cmp.Diff(want, got.ReadableLocations); d != "" {
			t.Errorf("Host %s: readableLocations (-want +got):\n%s", c.host, d)
		}
		if got.ID != "localhost" || got.RID != "localhost" || got.DBs != "//dbs/" || got.EnableMultipleWriteLocations ||
			got.UserConsistencyPolicy.DefaultConsistencyLevel != "Session" {
			t.Errorf("Host %s: account %+v", c.host, got)
		}
		var qe struct{ MaxJoinsPerSqlQuery int }
		if json.Unmarshal([]byte(got.QueryEngineConfiguration), &qe) != nil || qe.MaxJoinsPerSqlQuery != 5 {
			t.Errorf("queryEngineConfiguration %q", got.QueryEngineConfiguration)
		}
	}

	// The official emulator started with /Consistency=Strong (as azcosmos's
	// own emulator tests start it): the config file's account setting.
	if err := f.s.LoadConfig(context.Background(), []byte(`{"account":{"defaultConsistencyLevel":"strong"}}`)); err != nil {
		t.Fatal(err)
	}
	if got := f.readAccount("localhost:" + port); got.UserConsistencyPolicy.DefaultConsistencyLevel != "Strong" {
		t.Errorf("after a config of Strong: %q", got.UserConsistencyPolicy.DefaultConsistencyLevel)
	}
	err := f.s.LoadConfig(context.Background(), []byte(`{"account":{"defaultConsistencyLevel":"Linearizable"}}`))
	if core.ErrorCode(err) != core.EINVALID {
		t.Errorf("a config with an unknown level: %v", err)
	}
	if _, err := cosmos.NewServer(cosmos.Config{Addr: "127.0.0.1:0", Engine: f.e, Now: f.clock.Now, DefaultConsistencyLevel: "Most"}); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("NewServer with an unknown level: %v", err)
	}
}
