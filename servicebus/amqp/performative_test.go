package amqp

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// fullPerformatives has every performative and SASL body with every field
// set to a value other than its default.
func fullPerformatives() []Performative {
	errFull := &Error{Condition: "amqp:internal-error", Description: "boom", Info: Map{{Symbol("k"), "v"}}}
	return []Performative{
		&Open{
			ContainerID: "c1", Hostname: "sb.local", MaxFrameSize: 65536, ChannelMax: ptr(uint16(255)),
			IdleTimeOut: 120000, OutgoingLocales: []Symbol{"en-US"}, IncomingLocales: []Symbol{"en-US", "de"},
			OfferedCapabilities: []Symbol{"ANONYMOUS-RELAY"}, DesiredCapabilities: []Symbol{"x"},
			Properties: Map{{Symbol("product"), "lapse"}},
		},
		&Begin{
			RemoteChannel: ptr(uint16(3)), NextOutgoingID: 1, IncomingWindow: 5000, OutgoingWindow: 5000,
			HandleMax: ptr(uint32(255)), OfferedCapabilities: []Symbol{"a"}, DesiredCapabilities: []Symbol{"b"},
			Properties: Map{{Symbol("p"), int32(1)}},
		},
		&Attach{
			Name: "link-1", Handle: 7, Role: RoleReceiver, SndSettleMode: ptr(SndSettled), RcvSettleMode: ptr(RcvSecond),
			Source: &Source{
				Address: "queue1", Durable: DurableUnsettled, ExpiryPolicy: "never", Timeout: 60, Dynamic: true,
				DynamicNodeProperties: Map{{Symbol("lifetime-policy"), &Described{Descriptor: uint64(0x2b), Value: []any{}}}},
				DistributionMode:      "move",
				Filter: Map{{Symbol("sql"), &Described{
					Descriptor: Symbol("apache.org:selector-filter:string"), Value: "color = 'red'"}}},
				DefaultOutcome: &Modified{DeliveryFailed: true},
				Outcomes:       []Symbol{"amqp:accepted:list", "amqp:rejected:list"},
				Capabilities:   []Symbol{"queue"},
			},
			Target: &Target{
				Address: "queue1", Durable: DurableConfiguration, ExpiryPolicy: "link-detach", Timeout: 1,
				Dynamic: true, DynamicNodeProperties: Map{}, Capabilities: []Symbol{"queue"},
			},
			Unsettled:            Map{{[]byte{1, 2}, &Accepted{}}, {[]byte{3}, &Received{SectionNumber: 1, SectionOffset: 2}}},
			IncompleteUnsettled:  true,
			InitialDeliveryCount: ptr(uint32(0)),
			MaxMessageSize:       1 << 20,
			OfferedCapabilities:  []Symbol{"o"}, DesiredCapabilities: []Symbol{"d"},
			Properties: Map{{Symbol("com.microsoft:timeout"), uint32(60000)}},
		},
		&Flow{
			NextIncomingID: ptr(uint32(1)), IncomingWindow: 2, NextOutgoingID: 3, OutgoingWindow: 4,
			Handle: ptr(uint32(5)), DeliveryCount: ptr(uint32(6)), LinkCredit: ptr(uint32(7)), Available: ptr(uint32(8)),
			Drain: true, Echo: true, Properties: Map{{Symbol("x"), nil}},
		},
		&Transfer{
			Handle: 1, DeliveryID: ptr(uint32(1 << 30)), DeliveryTag: []byte("tag"), MessageFormat: ptr(MessageFormatBatch),
			Settled: ptr(false), More: true, RcvSettleMode: ptr(RcvSecond), State: &Received{SectionNumber: 2, SectionOffset: 9},
			Resume: true, Aborted: true, Batchable: true,
		},
		&Disposition{
			Role: RoleReceiver, First: 10, Last: ptr(uint32(20)), Settled: true,
			State: &Rejected{Error: errFull}, Batchable: true,
		},
		&Detach{Handle: 9, Closed: true, Error: errFull},
		&End{Error: errFull},
		&Close{Error: errFull},
		&SASLMechanisms{Mechanisms: []Symbol{"MSSBCBS", "PLAIN", "ANONYMOUS"}},
		&SASLInit{Mechanism: "PLAIN", InitialResponse: []byte("\x00user\x00pass"), Hostname: "localhost"},
		&SASLChallenge{Challenge: []byte("c")},
		&SASLResponse{Response: []byte("r")},
		&SASLOutcome{Code: SASLCodeAuth, AdditionalData: []byte("a")},
	}
}

// minimalPerformatives has every performative and SASL body with only its
// mandatory fields.
func minimalPerformatives() []Performative {
	return []Performative{
		&Open{ContainerID: ""},
		&Begin{},
		&Attach{Name: "l"},
		&Flow{},
		&Transfer{},
		&Disposition{},
		&Detach{},
		&End{},
		&Close{},
		&SASLMechanisms{Mechanisms: []Symbol{}},
		&SASLInit{Mechanism: "ANONYMOUS"},
		&SASLChallenge{Challenge: []byte{}},
		&SASLResponse{Response: []byte{}},
		&SASLOutcome{},
	}
}

func TestPerformativeRoundTrip(t *testing.T) {
	for _, set := range []struct {
		name string
		ps   []Performative
	}{{"Full", fullPerformatives()}, {"Minimal", minimalPerformatives()}} {
		for _, p := range set.ps {
			t.Run(set.name+compositeName(p.(fieldDecoder)), func(t *testing.T) {
				b, err := p.AppendTo(nil)
				if err != nil {
					t.Fatalf("AppendTo: %v", err)
				}
				got, n, err := ReadPerformative(b)
				if err != nil {
					t.Fatalf("ReadPerformative: %v", err)
				}
				if n != len(b) {
					t.Errorf("ReadPerformative took %d of %d bytes", n, len(b))
				}
				if diff := cmp.Diff(p, got); diff != "" {
					t.Errorf("round trip (-want +got):\n%s", diff)
				}
				if got.Descriptor() != p.Descriptor() {
					t.Errorf("Descriptor = %#x, want %#x", got.Descriptor(), p.Descriptor())
				}
				for i := range len(b) {
					if _, _, err := ReadPerformative(b[:i]); err == nil {
						t.Errorf("ReadPerformative of the first %d of %d bytes succeeded", i, len(b))
					}
				}
			})
		}
	}
}

// TestPerformativeMinimalEncoding checks that fields at their defaults are
// left out: trailing ones dropped, others sent as null.
func TestPerformativeMinimalEncoding(t *testing.T) {
	tests := []struct {
		name string
		p    Performative
		want []byte
	}{
		{"CloseNoError", &Close{}, hexBytes(0x00, 0x53, 0x18, 0x45)},
		{"EndNoError", &End{}, hexBytes(0x00, 0x53, 0x17, 0x45)},
		{"OpenContainerOnly", &Open{ContainerID: "c"}, hexBytes(0x00, 0x53, 0x10, 0xc0, 4, 1, 0xa1, 1, "c")},
		{"DetachClosed", &Detach{Handle: 0, Closed: true}, hexBytes(0x00, 0x53, 0x16, 0xc0, 3, 2, 0x43, 0x41)},
		{"AttachNullTarget", &Attach{Name: "n", Handle: 1, Role: RoleReceiver, Source: &Source{Address: "q"}},
			hexBytes(0x00, 0x53, 0x12, 0xc0, 18, 6, 0xa1, 1, "n", 0x52, 1, 0x41, 0x40, 0x40,
				0x00, 0x53, 0x28, 0xc0, 4, 1, 0xa1, 1, "q")},
		{"DispositionAccepted", &Disposition{Role: RoleReceiver, First: 3, Settled: true, State: &Accepted{}},
			hexBytes(0x00, 0x53, 0x15, 0xc0, 10, 5, 0x41, 0x52, 3, 0x40, 0x41, 0x00, 0x53, 0x24, 0x45)},
		{"SASLOutcomeOK", &SASLOutcome{Code: SASLCodeOK}, hexBytes(0x00, 0x53, 0x44, 0xc0, 3, 1, 0x50, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.AppendTo(nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AppendTo (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadPerformativeSpecVectors decodes hand-written encodings, including
// ones our encoder never produces: symbolic descriptors, list32, wide
// integer encodings, single symbols for multiple fields and explicit nulls.
func TestReadPerformativeSpecVectors(t *testing.T) {
	tests := []struct {
		name string
		enc  []byte
		want Performative
	}{
		{"OpenSymbolicDescriptor",
			hexBytes(0x00, 0xa3, 14, "amqp:open:list", 0xc0, 23, 3,
				0xa1, 4, "cont", 0xa1, 9, "localhost", 0x70, 0, 1, 0, 0),
			&Open{ContainerID: "cont", Hostname: "localhost", MaxFrameSize: 65536}},
		{"OpenSingleSymbolCapabilities",
			hexBytes(0x00, 0x53, 0x10, 0xc0, 14, 8, 0xa1, 1, "c", 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0xa3, 2, "ab"),
			&Open{ContainerID: "c", OfferedCapabilities: []Symbol{"ab"}}},
		{"FlowList32WideInts",
			hexBytes(0x00, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x13, 0xd0, 0, 0, 0, 24, 0, 0, 0, 4,
				0x70, 0, 0, 0, 1, 0x70, 0, 0, 0, 2, 0x70, 0, 0, 0, 3, 0x70, 0, 0, 0, 4),
			&Flow{NextIncomingID: ptr(uint32(1)), IncomingWindow: 2, NextOutgoingID: 3, OutgoingWindow: 4}},
		{"TransferSymbolicStateAndBoolByte",
			hexBytes(0x00, 0xa3, 18, "amqp:transfer:list", 0xc0, 31, 8,
				0x43, 0x40, 0x40, 0x40, 0x56, 1, 0x40, 0x40,
				0x00, 0xa3, 18, "amqp:accepted:list", 0x45),
			&Transfer{Settled: ptr(true), State: &Accepted{}}},
		{"BeginTrailingUnknownFields",
			hexBytes(0x00, 0x53, 0x11, 0xc0, 13, 10, 0x40, 0x43, 0x43, 0x43, 0x40, 0x40, 0x40, 0x40, 0xa1, 1, "x", 0x40),
			&Begin{}},
		{"SASLInitSymbolic",
			hexBytes(0x00, 0xa3, 19, "amqp:sasl-init:list", 0xc0, 20, 3, 0xa3, 9, "ANONYMOUS", 0xa0, 0, 0xa1, 4, "host"),
			&SASLInit{Mechanism: "ANONYMOUS", InitialResponse: []byte{}, Hostname: "host"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := ReadPerformative(tt.enc)
			if err != nil {
				t.Fatalf("ReadPerformative: %v", err)
			}
			if n != len(tt.enc) {
				t.Errorf("took %d of %d bytes", n, len(tt.enc))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadPerformative (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadPerformativeErrors(t *testing.T) {
	tests := []struct {
		name string
		enc  []byte
	}{
		{"NotDescribed", hexBytes(0x45)},
		{"UnknownDescriptor", hexBytes(0x00, 0x53, 0x19, 0x45)},
		{"UnknownSymbol", hexBytes(0x00, 0xa3, 3, "foo", 0x45)},
		{"NotList", hexBytes(0x00, 0x53, 0x10, 0x40)},
		{"OpenNoContainerID", hexBytes(0x00, 0x53, 0x10, 0x45)},
		{"OpenNullContainerID", hexBytes(0x00, 0x53, 0x10, 0xc0, 2, 1, 0x40)},
		{"BeginMissingWindows", hexBytes(0x00, 0x53, 0x11, 0xc0, 3, 2, 0x40, 0x43)},
		{"AttachNoRole", hexBytes(0x00, 0x53, 0x12, 0xc0, 5, 2, 0xa1, 1, "n", 0x43)},
		{"TransferNoHandle", hexBytes(0x00, 0x53, 0x14, 0x45)},
		{"TransferHandleWrongType", hexBytes(0x00, 0x53, 0x14, 0xc0, 3, 1, 0x55, 1)},
		{"DispositionNoFirst", hexBytes(0x00, 0x53, 0x15, 0xc0, 2, 1, 0x41)},
		{"DetachErrorNotError", hexBytes(0x00, 0x53, 0x16, 0xc0, 7, 3, 0x43, 0x40, 0x00, 0x53, 0x24, 0x45)},
		{"DispositionStateNotDescribed", hexBytes(0x00, 0x53, 0x15, 0xc0, 6, 5, 0x41, 0x43, 0x40, 0x40, 0x45)},
		{"AttachSourceIsTarget", hexBytes(0x00, 0x53, 0x12, 0xc0, 12, 6, 0xa1, 1, "n", 0x43, 0x41, 0x40, 0x40, 0x00, 0x53, 0x29, 0x45)},
		{"CapabilitiesNotSymbols", hexBytes(0x00, 0x53, 0x10, 0xc0, 14, 8, 0xa1, 1, "c", 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0xa1, 2, "ab")},
		{"CapabilitiesArrayOfStrings", hexBytes(0x00, 0x53, 0x10, 0xc0, 16, 8, 0xa1, 1, "c", 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0xe0, 4, 1, 0xa1, 1, "x")},
		{"SASLMechanismsAbsent", hexBytes(0x00, 0x53, 0x40, 0x45)},
		{"SASLOutcomeNoCode", hexBytes(0x00, 0x53, 0x44, 0x45)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadPerformative(tt.enc)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("ReadPerformative error = %v, want a *DecodeError", err)
			}
		})
	}
}

func TestErrorImplementsError(t *testing.T) {
	var err error = &Error{Condition: "amqp:not-found", Description: "queue q"}
	if got, want := err.Error(), "amqp: amqp:not-found: queue q"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
