package amqp

import "time"

// listWriter writes a composite: its descriptor and a list of fields, with
// trailing null fields left out (§1.4).
type listWriter struct {
	dst   []byte
	start int // where the composite starts, to undo on error
	at    int // where the list header is reserved
	n     int // fields written
	last  int // fields up to and including the last non-null one
	end   int // len(dst) after the last non-null field
	err   error
}

func beginComposite(dst []byte, desc uint64) listWriter {
	w := listWriter{start: len(dst)}
	w.dst = appendUlong(append(dst, codeDescribed), desc)
	w.dst, w.at = beginCompound(w.dst)
	w.end = len(w.dst)
	return w
}

// wrote records a field written from offset before; a lone null byte does
// not count as a value.
func (w *listWriter) wrote(before int) {
	w.n++
	if len(w.dst) == before+1 && w.dst[before] == codeNull {
		return
	}
	w.last, w.end = w.n, len(w.dst)
}

// keep keeps every field written so far, trailing nulls too.
func (w *listWriter) keep() {
	w.last, w.end = w.n, len(w.dst)
}

func (w *listWriter) null() {
	w.dst = append(w.dst, codeNull)
	w.n++
}

func (w *listWriter) bool(v bool) {
	b := len(w.dst)
	w.dst = appendBool(w.dst, v)
	w.wrote(b)
}

// flag writes a boolean field whose default is false, as null when false.
func (w *listWriter) flag(v bool) {
	if v {
		w.bool(true)
	} else {
		w.null()
	}
}

func (w *listWriter) boolPtr(p *bool) {
	if p == nil {
		w.null()
	} else {
		w.bool(*p)
	}
}

func (w *listWriter) ubyte(v uint8) {
	b := len(w.dst)
	w.dst = append(w.dst, codeUbyte, v)
	w.wrote(b)
}

func (w *listWriter) ubytePtr(p *uint8) {
	if p == nil {
		w.null()
	} else {
		w.ubyte(*p)
	}
}

func (w *listWriter) ushort(v uint16) {
	b := len(w.dst)
	w.dst = append(w.dst, codeUshort, byte(v>>8), byte(v))
	w.wrote(b)
}

func (w *listWriter) uint(v uint32) {
	b := len(w.dst)
	w.dst = appendUint(w.dst, v)
	w.wrote(b)
}

// optUint writes a uint field for which zero means absent, as null when 0.
func (w *listWriter) optUint(v uint32) {
	if v == 0 {
		w.null()
	} else {
		w.uint(v)
	}
}

func (w *listWriter) uintPtr(p *uint32) {
	if p == nil {
		w.null()
	} else {
		w.uint(*p)
	}
}

func (w *listWriter) ulong(v uint64) {
	b := len(w.dst)
	w.dst = appendUlong(w.dst, v)
	w.wrote(b)
}

// binary writes a binary field, as null when nil.
func (w *listWriter) binary(v []byte) {
	if v == nil {
		w.null()
		return
	}
	b := len(w.dst)
	w.dst = appendBinary(w.dst, v)
	w.wrote(b)
}

func (w *listWriter) string(v string) {
	b := len(w.dst)
	w.dst = appendString(w.dst, v)
	w.wrote(b)
}

// optString writes a string field, as null when empty.
func (w *listWriter) optString(v string) {
	if v == "" {
		w.null()
	} else {
		w.string(v)
	}
}

func (w *listWriter) symbol(v Symbol) {
	b := len(w.dst)
	w.dst = appendSymbol(w.dst, v)
	w.wrote(b)
}

// optSymbol writes a symbol field, as null when empty.
func (w *listWriter) optSymbol(v Symbol) {
	if v == "" {
		w.null()
	} else {
		w.symbol(v)
	}
}

// symbols writes a multiple symbol field as an array, as null when empty.
func (w *listWriter) symbols(v []Symbol) {
	if len(v) == 0 {
		w.null()
		return
	}
	w.value(v)
}

func (w *listWriter) timestamp(t time.Time) {
	if t.IsZero() {
		w.null()
		return
	}
	b := len(w.dst)
	w.dst = appendTimestamp(w.dst, t)
	w.wrote(b)
}

// value writes a field of any encodable value, nil as null.
func (w *listWriter) value(v any) {
	if w.err != nil {
		w.n++
		return
	}
	b := len(w.dst)
	w.dst, w.err = AppendValue(w.dst, v)
	w.wrote(b)
}

// mapv writes a map field, as null when nil.
func (w *listWriter) mapv(m Map) {
	if m == nil {
		w.null()
		return
	}
	w.value(m)
}

// finish drops trailing nulls and writes the list header.
func (w *listWriter) finish() ([]byte, error) {
	if w.err != nil {
		return w.dst[:w.start], w.err
	}
	w.dst = w.dst[:w.end]
	if w.last == 0 {
		return append(w.dst[:w.at], codeList0), nil
	}
	out, err := endCompound(w.dst, w.at, w.last, codeList8, codeList32, auto)
	if err != nil {
		return out[:w.start], err
	}
	return out, nil
}
