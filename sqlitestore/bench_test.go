package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
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
