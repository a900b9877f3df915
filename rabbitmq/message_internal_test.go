package rabbitmq

import (
	"testing"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// propsPriority reads what wire.DecodeProperties reads, whichever of the
// fields before the priority are set (RB-14).
func TestPropsPriority_RB14(t *testing.T) {
	cases := []wire.Properties{
		{},
		{Flags: wire.FlagPriority, Priority: 7},
		{Flags: wire.FlagPriority | wire.FlagContentType | wire.FlagDeliveryMode, ContentType: "text/plain", DeliveryMode: 2, Priority: 200},
		{Flags: wire.FlagPriority | wire.FlagContentEncoding | wire.FlagHeaders | wire.FlagExpiration,
			ContentEncoding: "gzip", Headers: map[string]any{"k": "v", "n": int32(3)}, Priority: 1, Expiration: "100"},
		{Flags: wire.FlagContentType | wire.FlagHeaders | wire.FlagDeliveryMode, ContentType: "a", Headers: map[string]any{}, DeliveryMode: 1},
	}
	for _, p := range cases {
		b := p.Append(nil)
		got, ok := propsPriority(b)
		want, wantOK := p.Priority, p.Flags&wire.FlagPriority != 0
		if got != want || ok != wantOK {
			t.Errorf("%+v: propsPriority = %d, %v; want %d, %v", p, got, ok, want, wantOK)
		}
	}
}

// FuzzPropsPriority: on any input propsPriority does not panic, and it
// agrees with wire.DecodeProperties on properties that decode.
func FuzzPropsPriority(f *testing.F) {
	for _, p := range []wire.Properties{
		{Flags: wire.FlagPriority, Priority: 7},
		{Flags: wire.FlagPriority | wire.FlagHeaders | wire.FlagContentType, ContentType: "x", Headers: map[string]any{"a": "b"}, Priority: 3},
	} {
		f.Add(p.Append(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := propsPriority(b)
		p, err := wire.DecodeProperties(b)
		if err != nil {
			return
		}
		if wantOK := p.Flags&wire.FlagPriority != 0; ok != wantOK || ok && got != p.Priority {
			t.Fatalf("propsPriority = %d, %v; DecodeProperties: %d, %v", got, ok, p.Priority, wantOK)
		}
	})
}
