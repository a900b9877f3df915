package servicebus_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

var updateSeeds = flag.Bool("update-seeds", false,
	"write the frames go-amqp and azservicebus send as seeds of FuzzReadFrame in servicebus/amqp")

// seedDir holds the seed corpus of FuzzReadFrame in package amqp.
var seedDir = filepath.Join("amqp", "testdata", "fuzz", "FuzzReadFrame")

// maxSeedFrame is the max-frame-size FuzzReadFrame reads with; larger
// frames would only test the size check.
const maxSeedFrame = 1 << 16

// TestRecordClientFrames runs conversations of go-amqp and azservicebus
// through a tap and checks that lapse's codec decodes every frame they
// send. With -update-seeds it writes each distinct frame as a seed of
// the codec's FuzzReadFrame (docs/architecture.md, conventions): recorded-goamqp-NN and
// recorded-azservicebus-NN.
func TestRecordClientFrames(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("q", nil)
	f.MustQueue("sdk", nil)
	conversations := []struct {
		name string
		run  func(t *testing.T, addr string)
	}{
		{"goamqp", goAMQPConversation},
		{"azservicebus", azServiceBusConversation},
	}
	recorded := map[string][][]byte{}
	for _, cv := range conversations {
		tp := f.MustTap(t)
		cv.run(t, tp.Addr())
		tp.waitClosed()
		for _, conn := range tp.clientFrames() {
			recorded[cv.name] = append(recorded[cv.name], conn...)
		}
	}
	for name, frames := range recorded {
		kinds := map[string]int{}
		for i, b := range frames {
			fr, n, err := codec.ParseFrame(b, 1<<20)
			if err != nil || n != len(b) {
				t.Fatalf("%s frame %d (% x) does not decode: took %d bytes, %v", name, i, b, n, err)
			}
			kinds[strings.TrimPrefix(fmt.Sprintf("%T", fr.Body), "*amqp.")]++
		}
		for _, want := range []string{"SASLInit", "Open", "Begin", "Attach", "Flow", "Transfer", "Disposition", "Detach", "End", "Close"} {
			if kinds[want] == 0 {
				t.Errorf("%s sent no %s frame; it sent %v", name, want, kinds)
			}
		}
	}
	if !*updateSeeds {
		return
	}
	for name, frames := range recorded {
		writeSeeds(t, "recorded-"+name, frames)
	}
}

// writeSeeds replaces the seeds named prefix-NN with the distinct frames.
func writeSeeds(t *testing.T, prefix string, frames [][]byte) {
	t.Helper()
	old, err := filepath.Glob(filepath.Join(seedDir, prefix+"-*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	n := 0
	for _, b := range frames {
		if len(b) > maxSeedFrame || seen[string(b)] {
			continue
		}
		seen[string(b)] = true
		content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		if err := os.WriteFile(filepath.Join(seedDir, fmt.Sprintf("%s-%02d", prefix, n)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	t.Logf("wrote %d seeds %s-NN to %s", n, prefix, seedDir)
}

// goAMQPConversation does with go-amqp what azservicebus does underneath
// and what it does not: put-token, a send, a batch, each outcome, drain.
func goAMQPConversation(t *testing.T, addr string) {
	c := MustDialAMQPTo(t, addr, "q")
	s := MustSession(t, c)
	snd := MustSender(t, s, "q")
	ttl := time.Minute
	subject := "subject"
	MustSend(t, snd, &amqp.Message{
		Header:                &amqp.MessageHeader{Durable: true, TTL: ttl},
		Properties:            &amqp.MessageProperties{MessageID: "m1", Subject: &subject},
		Annotations:           amqp.Annotations{"x-opt-partition-key": "p"},
		ApplicationProperties: map[string]any{"s": "v", "i": int64(1), "b": true, "f": 1.5, "t": t0},
		Data:                  [][]byte{[]byte("one")},
	})
	batch := &amqp.Message{Format: 0x80013700}
	for _, b := range []string{"two", "three", "four"} {
		raw, err := amqp.NewMessage([]byte(b)).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		batch.Data = append(batch.Data, raw)
	}
	MustSend(t, snd, batch)
	r := MustReceiver(t, s, "q", peekLock())
	settle := []func(*amqp.Message) error{
		func(m *amqp.Message) error { return r.AcceptMessage(ctx(t), m) },
		func(m *amqp.Message) error { return r.ReleaseMessage(ctx(t), m) },
		func(m *amqp.Message) error {
			return r.ModifyMessage(ctx(t), m, &amqp.ModifyMessageOptions{Annotations: amqp.Annotations{"x": "y"}})
		},
		func(m *amqp.Message) error {
			return r.RejectMessage(ctx(t), m, &amqp.Error{Condition: "com.microsoft:dead-letter",
				Info: map[string]any{"DeadLetterReason": "r", "DeadLetterErrorDescription": "d"}})
		},
	}
	for _, fn := range settle {
		if err := fn(MustReceive(t, r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.IssueCredit(10); err != nil {
		t.Fatal(err)
	}
	if err := r.DrainCredit(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	for m := r.Prefetched(); m != nil; m = r.Prefetched() {
		r.AcceptMessage(ctx(t), m)
	}
	r.Close(ctx(t))
	snd.Close(ctx(t))
	s.Close(ctx(t))
	c.Close()
}

// azServiceBusConversation sends, receives, settles and peeks with the
// SDK.
func azServiceBusConversation(t *testing.T, addr string) {
	connStr := "Endpoint=sb://" + addr + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
	c, err := azservicebus.NewClientFromConnectionString(connStr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx(t))
	snd, err := c.NewSender("sdk", nil)
	if err != nil {
		t.Fatal(err)
	}
	ttl := time.Hour
	subject := "subject"
	if err := snd.SendMessage(ctx(t), &azservicebus.Message{Body: []byte("sdk"), TimeToLive: &ttl, Subject: &subject,
		ApplicationProperties: map[string]any{"k": "v", "n": int64(2)}}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := snd.NewMessageBatch(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"b1", "b2"} {
		if err := b.AddMessage(&azservicebus.Message{Body: []byte(s)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := snd.SendMessageBatch(ctx(t), b, nil); err != nil {
		t.Fatal(err)
	}
	if err := snd.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	rcv, err := c.NewReceiverForQueue("sdk", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for len(got) < 3 {
		msgs, err := rcv.ReceiveMessages(ctx(t), 3-len(got), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			got = append(got, m.Body)
			if bytes.Equal(m.Body, []byte("b2")) {
				err = rcv.AbandonMessage(ctx(t), m, nil)
			} else {
				err = rcv.CompleteMessage(ctx(t), m, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := rcv.PeekMessages(ctx(t), 10, nil); err != nil {
		t.Fatal(err)
	}
	if err := rcv.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
}
