package httpserver_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/httpserver"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLifecycle(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	if s.Addr() != nil {
		t.Fatal("an address before Open")
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("second Open: %v", err)
	}
	resp, err := http.Get("http://" + s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Fatalf("served %q", b)
	}
	// A taken port fails at Open.
	other := httpserver.New("other API", s.Addr().String(), h, nil)
	if err := other.Open(); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Fatalf("Open on a taken port: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("Close %d: %v", i+1, err)
		}
	}
	if err := s.Open(); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Fatalf("Open after Close: %v", err)
	}
	if err := httpserver.New("never opened", ":0", h, nil).Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
