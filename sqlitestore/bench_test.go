package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// benchItem returns an item as the engine puts one: a 100-byte body, times,
// a TTL and its rule.
func benchItem(seq uint64, body []byte, at time.Time) *core.Item {
	return &core.Item{
		Seq:          seq,
		Body:         body,
		Meta:         []byte(`{"messageId":"m"}`),
		EnqueuedAt:   at,
		ModifiedAt:   at,
		TTL:          core.After(time.Minute),
		EffectiveTTL: core.After(time.Minute),
		DueAt:        at.Add(time.Minute),
		Rule:         "SB-1",
		Persistent:   true,
	}
}

// BenchmarkAcknowledgedWrites measures acknowledged writes per second: each
// of n writers appends one OpPutItem of a 100-byte item to a shared queue
// and waits for its Commit, over and over. The time ends once SQLite has
// them all too, so that the figure is what the store keeps up with, not a
// burst that the journal absorbs: writes/record is how many writes a
// journal record (a commit) holds, writes/tx how many a SQLite
// transaction of the applier does.
func BenchmarkAcknowledgedWrites(b *testing.B) {
	for _, writers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := MustOpen(b, b.TempDir())
			k := core.EntityKey{Protocol: core.ServiceBus, Name: "bench"}
			mustApply(b, s, core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Kind: "queue", Durable: true}})
			body := make([]byte, 100)
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			var next atomic.Uint64
			n := uint64(b.N)
			var failed atomic.Value

			b.ReportAllocs()
			b.ResetTimer()
			s.txs.Store(0)
			s.records.Store(0)
			start := time.Now()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					ctx := context.Background()
					for {
						seq := next.Add(1)
						if seq > n {
							return
						}
						op := core.Op{Kind: core.OpPutItem, Key: k, Item: benchItem(seq, body, at)}
						if err := s.Append([]core.Op{op}).Wait(ctx); err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			s.drain()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
			b.ReportMetric(float64(b.N)/float64(s.records.Load()), "writes/record")
			b.ReportMetric(float64(b.N)/float64(s.txs.Load()), "writes/tx")
		})
	}
}

// BenchmarkEngineAcknowledgedEnqueue is BenchmarkAcknowledgedWrites through
// the engine, as a front-end acknowledges a persistent message (a publisher
// confirm, an accepted transfer): Enqueue into a durable entity, then wait
// for the Commit. It adds the engine's lock and its copy of each item.
func BenchmarkEngineAcknowledgedEnqueue(b *testing.B) {
	for _, writers := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := MustOpen(b, b.TempDir())
			e := core.NewEngine(core.Config{Store: s})
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			k := core.EntityKey{Protocol: core.RabbitMQ, Name: "/bench"}
			_, c, err := e.Create(at, core.Entity{EntityKey: k, Kind: "queue", Durable: true,
				Policy: core.Policy{DefaultTTL: core.After(time.Hour), MaxTTL: core.After(time.Hour), HeadOnly: true}})
			if err != nil {
				b.Fatal(err)
			}
			storetest.MustWait(b, c)
			body := make([]byte, 100)
			var left atomic.Int64
			left.Store(int64(b.N))
			var failed atomic.Value
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					ctx := context.Background()
					for left.Add(-1) >= 0 {
						_, c, err := e.Enqueue(at, k, core.Item{Body: body, Persistent: true})
						if err == nil {
							err = c.Wait(ctx)
						}
						if err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			s.drain() // as BenchmarkAcknowledgedWrites
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "acks/s")
		})
	}
}

// BenchmarkSQLiteReference is the reference of BenchmarkAcknowledgedWrites
// (issue 17): SQLite itself, as the store opens it (modernc, WAL,
// synchronous=NORMAL, exclusive locking), through database/sql on one
// goroutine with no hand-off, writing 100-byte rows of a two-column table
// in a folder beside the store's: one row per transaction, what a lone
// acknowledged writer cannot beat, and 1,000 rows per transaction, the
// cost of a row once a transaction's is shared.
func BenchmarkSQLiteReference(b *testing.B) {
	for _, perTx := range []int{1, 1000} {
		b.Run(fmt.Sprintf("rows-per-tx=%d", perTx), func(b *testing.B) {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "ref.db")+
				"?_pragma=synchronous(NORMAL)&_pragma=locking_mode(EXCLUSIVE)&_pragma=journal_mode(WAL)")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)`); err != nil {
				b.Fatal(err)
			}
			var stmts [3]*sql.Stmt
			for i, q := range []string{`BEGIN IMMEDIATE`, `INSERT INTO t (id, body) VALUES (?, ?)`, `COMMIT`} {
				if stmts[i], err = db.Prepare(q); err != nil {
					b.Fatal(err)
				}
			}
			body := make([]byte, 100)
			b.ResetTimer()
			start := time.Now()
			for id := 0; id < b.N; {
				if _, err := stmts[0].Exec(); err != nil {
					b.Fatal(err)
				}
				for range perTx {
					id++
					if _, err := stmts[1].Exec(id, body); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := stmts[2].Exec(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

// BenchmarkSQLiteReferenceItemRows is BenchmarkSQLiteReference with the
// store's own rows and statements: the items of BenchmarkAcknowledgedWrites
// written by putItems (multi-row statements of up to maxRows rows) between
// BEGIN IMMEDIATE and COMMIT, on one goroutine, with no queue, Commit or
// hand-off. rows-per-tx=1, 16 and 256 are what a transaction of 1, 16 and
// 256 writers holds at most: how fast BenchmarkAcknowledgedWrites could go
// if the store's machinery cost nothing.
func BenchmarkSQLiteReferenceItemRows(b *testing.B) {
	for _, perTx := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("rows-per-tx=%d", perTx), func(b *testing.B) {
			s := MustOpen(b, b.TempDir())
			k := core.EntityKey{Protocol: core.ServiceBus, Name: "bench"}
			mustApply(b, s, core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Kind: "queue", Durable: true}})
			body := make([]byte, 100)
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			ctx := context.Background()
			s.connMu.Lock()
			defer s.connMu.Unlock()
			items := make([]*core.Item, perTx)
			b.ResetTimer()
			start := time.Now()
			for seq := uint64(0); seq < uint64(b.N); {
				for i := range items {
					seq++
					items[i] = benchItem(seq, body, at)
				}
				if _, err := s.stmts.begin.ExecContext(ctx); err != nil {
					b.Fatal(err)
				}
				for rest := items; len(rest) > 0; {
					n := chunk(len(rest))
					if _, err := s.putItems(ctx, k, rest[:n]); err != nil {
						b.Fatal(err)
					}
					rest = rest[n:]
				}
				if _, err := s.stmts.commit.ExecContext(ctx); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rows/s")
		})
	}
}

// BenchmarkStoreReplaces measures what the applier spends on a replace of
// a keyed item of 1 KB among 5,000, in transactions of 300 replaces and of
// 800 (what 100 ms of eight azcosmos writers hold on a quiet machine, near
// the applier's 1 MB): kept-row is the engine's
// replace, the new item put at the old one's row (core.Item.Row);
// new-row deletes the old item and puts the new one at its own Seq, as a
// delete and a create do, and as every replace did before rows. The
// journal is left out: the records are applied as the applier applies
// them.
func BenchmarkStoreReplaces(b *testing.B) {
	for _, c := range []struct {
		keepRow bool
		perTx   int
	}{{true, 300}, {true, 800}, {false, 300}} {
		keepRow, perTx := c.keepRow, c.perTx
		name := fmt.Sprintf("%s/tx=%d", map[bool]string{true: "kept-row", false: "new-row"}[keepRow], perTx)
		b.Run(name, func(b *testing.B) {
			const items = 5000
			s := MustOpen(b, b.TempDir())
			k := core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
			mustApply(b, s, core.Op{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Kind: "container", Durable: true}})
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			r := rand.New(rand.NewPCG(1, 2))
			cur := make([]core.Item, items)
			seq := uint64(0)
			next := func(i int, row uint64) *core.Item {
				seq++
				body := make([]byte, 1100)
				for j := range body {
					body[j] = byte(r.Uint32())
				}
				it := benchItem(seq, body, at)
				it.Key, it.Row = fmt.Sprint("item-", i), row
				cur[i] = *it
				return it
			}
			var ops []core.Op
			for i := range cur {
				ops = append(ops, core.Op{Kind: core.OpPutItem, Key: k, Item: next(i, 0)})
			}
			mustApply(b, s, ops...)
			b.ResetTimer()
			for done := 0; done < b.N; {
				b.StopTimer()
				batch := make([]pending, 0, perTx)
				for ; len(batch) < perTx && done < b.N; done++ {
					i := r.IntN(items)
					old := cur[i]
					var row uint64
					if keepRow {
						row = core.RowOf(old.Seq, old.Row)
					}
					batch = append(batch, pending{ops: []core.Op{
						{Kind: core.OpDeleteItem, Key: k, Seq: old.Seq, Row: old.Row},
						{Kind: core.OpPutItem, Key: k, Item: next(i, row)},
					}})
				}
				b.StartTimer()
				s.connMu.Lock()
				err := s.apply(batch)
				s.connMu.Unlock()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
