package sqlitestore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// The journal's records hold the ops of the Appends of one commit in this
// binary form. Times keep what the database keeps, milliseconds; the rest
// is kept whole. A record's Appends stay apart, so that the one Append
// that cannot be applied is the only one left out.
//
//	record  = count(appends) { count(ops) { op } }
//	op      = kind:byte protocol:str name:str  fields of the kind
//	          [row:uvarint, after them, when kind has withRow]
//	str     = uvarint(len) bytes
//	time    = 0 (the zero time) | 1 varint(Unix milliseconds)
//	ttl     = 0 (none) | 1 (Forever) | 2 varint(nanoseconds)

// withRow marks the kind of an item op whose Row (core.Item.Row, core.Op.Row)
// is not 0, which then follows the op's other fields. Records written
// before rows existed have no such kind, and decode as they did.
const withRow = 0x80

// appendRecord appends the record of the ops of batch to b.
func appendRecord(b []byte, batch []pending) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(batch)))
	for _, p := range batch {
		b = binary.AppendUvarint(b, uint64(len(p.ops)))
		for _, op := range p.ops {
			var err error
			if b, err = appendOp(b, op); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// recordSize is about how long the record of batch is: its bodies and
// metadata, and a little for each op's other fields, so that the commit
// makes the record's buffer once rather than growing it item by item
// (the copies were about 2% of a Cosmos DB replace's CPU).
func recordSize(batch []pending) int {
	n := 0
	for _, p := range batch {
		for _, op := range p.ops {
			n += 32 + len(op.Key.Protocol) + len(op.Key.Name)
			if op.Kind == core.OpPutItem {
				// About 90 bytes of numbers and times, and the strings.
				it := op.Item
				n += 96 + len(it.Key) + len(it.Group) + len(it.Body) + len(it.Meta) + len(it.Rule) + len(it.Reason)
			}
			n += len(op.State)
		}
	}
	return n
}

func appendOp(b []byte, op core.Op) ([]byte, error) {
	var row uint64
	switch op.Kind {
	case core.OpPutItem:
		row = op.Item.Row
	case core.OpDeleteItem:
		row = op.Row
	}
	if row != 0 {
		b = append(b, byte(op.Kind)|withRow)
	} else {
		b = append(b, byte(op.Kind))
	}
	b = appendStr(b, op.Key.Protocol)
	b = appendStr(b, op.Key.Name)
	switch op.Kind {
	case core.OpPutEntity:
		e := op.Entity
		policy, err := json.Marshal(e.Policy)
		if err != nil {
			return nil, err
		}
		b = appendStr(b, e.Kind)
		b = appendStr(b, e.Parent)
		b = appendStr(b, e.DeadLetterQueue)
		b = appendBool(b, e.Durable)
		b = appendBytes(b, policy)
		b = binary.AppendUvarint(b, uint64(len(e.Settings)))
		for _, st := range e.Settings {
			b = appendStr(b, st.Key)
			b = appendStr(b, st.Value)
		}
		b = appendBytes(b, e.Meta)
		b = appendTime(b, e.Created)
		b = binary.AppendUvarint(b, e.LastSeq)
	case core.OpPutItem:
		it := op.Item
		b = binary.AppendUvarint(b, it.Seq)
		b = appendStr(b, it.Key)
		b = appendStr(b, it.Group)
		b = appendBytes(b, it.Body)
		b = appendBytes(b, it.Meta)
		b = binary.AppendUvarint(b, uint64(it.State))
		b = appendTime(b, it.EnqueuedAt)
		b = appendTime(b, it.ModifiedAt)
		b = appendTime(b, it.ScheduledAt)
		b = appendTTL(b, it.TTL)
		b = appendTTL(b, it.EffectiveTTL)
		b = appendTime(b, it.DueAt)
		b = appendStr(b, it.Rule)
		b = appendStr(b, it.Reason)
		b = appendTime(b, it.LockedUntil)
		b = binary.AppendUvarint(b, uint64(it.DeliveryCount))
		b = appendBool(b, it.Persistent)
	case core.OpDeleteItem:
		b = binary.AppendUvarint(b, op.Seq)
	case core.OpPutSessionState:
		b = appendStr(b, op.Group)
		b = appendBytes(b, op.State)
	case core.OpDeleteSessionState:
		b = appendStr(b, op.Group)
	}
	if row != 0 {
		b = binary.AppendUvarint(b, row)
	}
	return b, nil
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), t.UnixMilli())
}

func appendTTL(b []byte, t core.TTL) []byte {
	switch {
	case !t.IsSet():
		return append(b, 0)
	case t.IsForever():
		return append(b, 1)
	}
	return binary.AppendVarint(append(b, 2), int64(t.Duration()))
}

// errBadRecord is a record that does not decode: the torn end of a
// journal, or a damaged one.
var errBadRecord = errors.New("a journal record does not decode")

// decodeRecord returns the Appends of a record, as pendings without
// Commits. Bodies, metas and states point into b, which must not change
// while they are in use.
func decodeRecord(b []byte) ([]pending, error) {
	d := decoder{b: b}
	n := d.count()
	batch := make([]pending, 0, n)
	for range n {
		if d.err != nil {
			break
		}
		ops := make([]core.Op, 0, d.count())
		for range cap(ops) {
			if d.err != nil {
				break
			}
			ops = append(ops, d.op())
		}
		batch = append(batch, pending{ops: ops})
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = errBadRecord
	}
	if d.err != nil {
		return nil, d.err
	}
	return batch, nil
}

// decoder reads a record; its first error sticks and makes every later
// read return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errBadRecord, nil }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count, which cannot be more than the bytes left.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil || n == 0 {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) bool() bool { return d.byte() != 0 }

func (d *decoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		return time.UnixMilli(d.varint()).UTC()
	}
	d.fail()
	return time.Time{}
}

func (d *decoder) ttl() core.TTL {
	switch d.byte() {
	case 0:
		return core.NoTTL
	case 1:
		return core.Forever
	case 2:
		return core.After(time.Duration(d.varint()))
	}
	d.fail()
	return core.NoTTL
}

func (d *decoder) op() core.Op {
	kind := d.byte()
	op := core.Op{Kind: core.OpKind(kind &^ withRow)}
	op.Key.Protocol = d.str()
	op.Key.Name = d.str()
	switch op.Kind {
	case core.OpPutEntity:
		e := &core.Entity{EntityKey: op.Key}
		e.Kind = d.str()
		e.Parent = d.str()
		e.DeadLetterQueue = d.str()
		e.Durable = d.bool()
		if policy := d.bytes(); d.err == nil {
			if err := json.Unmarshal(policy, &e.Policy); err != nil {
				d.fail()
			}
		}
		if n := d.count(); n > 0 {
			e.Settings = make([]core.Setting, n)
			for i := range e.Settings {
				e.Settings[i] = core.Setting{Key: d.str(), Value: d.str()}
			}
		}
		e.Meta = d.bytes()
		e.Created = d.time()
		e.LastSeq = d.uvarint()
		op.Entity = e
	case core.OpPutItem:
		it := &core.Item{}
		it.Seq = d.uvarint()
		it.Key = d.str()
		it.Group = d.str()
		it.Body = d.bytes()
		it.Meta = d.bytes()
		it.State = core.State(d.uvarint())
		it.EnqueuedAt = d.time()
		it.ModifiedAt = d.time()
		it.ScheduledAt = d.time()
		it.TTL = d.ttl()
		it.EffectiveTTL = d.ttl()
		it.DueAt = d.time()
		it.Rule = d.str()
		it.Reason = d.str()
		it.LockedUntil = d.time()
		it.DeliveryCount = uint32(d.uvarint())
		it.Persistent = d.bool()
		op.Item = it
	case core.OpDeleteItem:
		op.Seq = d.uvarint()
	case core.OpPutSessionState:
		op.Group = d.str()
		op.State = d.bytes()
	case core.OpDeleteSessionState:
		op.Group = d.str()
	case core.OpDeleteEntity, core.OpReset:
	default:
		d.fail()
	}
	if kind&withRow != 0 {
		row := d.uvarint()
		switch {
		case row == 0:
			d.fail() // written only when it is not
		case op.Kind == core.OpPutItem:
			op.Item.Row = row
		case op.Kind == core.OpDeleteItem:
			op.Row = row
		default:
			d.fail()
		}
	}
	return op
}
