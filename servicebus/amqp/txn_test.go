package amqp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The transaction types (§4.5) round-trip: an attach whose target is a
// coordinator (before, the attach was a decode error: its target field
// was "not a target"), a transfer and a disposition with a
// transactional-state, and the declare and discharge bodies of a message.
func TestTransactionTypesRoundTrip(t *testing.T) {
	zero := uint32(0)
	ps := []Performative{
		&Attach{Name: "coordinator", Handle: 0, Role: RoleSender, Source: &Source{Address: "coordinator"},
			Coordinator: &Coordinator{Capabilities: []Symbol{CapLocalTransactions}}, InitialDeliveryCount: &zero},
		&Transfer{Handle: 1, DeliveryID: &zero, DeliveryTag: []byte{1}, State: &TransactionalState{TxnID: []byte("txn:1")}},
		&Disposition{Role: RoleReceiver, First: 3, Settled: true,
			State: &TransactionalState{TxnID: []byte("txn:1"), Outcome: &Rejected{Error: &Error{Condition: "amqp:not-allowed"}}}},
		&Disposition{Role: RoleReceiver, First: 4, Settled: true, State: &Declared{TxnID: []byte("txn:2")}},
	}
	for _, p := range ps {
		b, err := p.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadPerformative(b)
		if err != nil {
			t.Fatalf("%T: %v", p, err)
		}
		if diff := cmp.Diff(p, got); diff != "" {
			t.Errorf("%T round trip (-want +got):\n%s", p, diff)
		}
	}
	for _, body := range []any{&Declare{}, &Discharge{TxnID: []byte("txn:1"), Fail: true}} {
		m := &Message{Value: body, HasValue: true}
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalMessage(b)
		if err != nil {
			t.Fatalf("%T: %v", body, err)
		}
		if diff := cmp.Diff(body, got.Value); diff != "" {
			t.Errorf("%T body round trip (-want +got):\n%s", body, diff)
		}
	}
}
