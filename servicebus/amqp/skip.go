package amqp

// skip checks that one value, constructor included, is well formed and
// bounded, and moves past it without building it.
func (d *decoder) skip() error {
	c, err := d.byte()
	if err != nil {
		return err
	}
	if c != codeDescribed {
		return d.skipBody(c)
	}
	if d.depth+1 > MaxDepth {
		return decodeErrorf("nesting deeper than %d", MaxDepth)
	}
	if _, err := d.descriptor(); err != nil {
		return err
	}
	inner := decoder{b: d.b, depth: d.depth + 1}
	if c, err = inner.byte(); err != nil {
		return err
	}
	if c == codeDescribed {
		return decodeErrorf("a described value's value is itself described")
	}
	if err := inner.skipBody(c); err != nil {
		return err
	}
	d.b = inner.b
	return nil
}

// skipBody checks and moves past the value that follows format code c.
func (d *decoder) skipBody(c byte) error {
	var err error
	switch c {
	case codeNull, codeTrue, codeFalse, codeUint0, codeUlong0, codeList0:
	case codeBool:
		_, err = d.boolBody(c)
	case codeUbyte, codeByte, codeSmallUint, codeSmallUlong, codeSmallInt, codeSmallLong,
		codeUshort, codeShort,
		codeUint, codeInt, codeFloat, codeChar, codeDecimal32,
		codeUlong, codeLong, codeDouble, codeTimestamp, codeDecimal64,
		codeDecimal128, codeUUID:
		_, err = d.next(fixedWidth(c))
	case codeVbin8, codeStr8, codeSym8:
		_, err = d.bytesBody(false)
	case codeVbin32, codeStr32, codeSym32:
		_, err = d.bytesBody(true)
	case codeList8, codeList32, codeMap8, codeMap32:
		sub, n, err := d.compound(c == codeList32 || c == codeMap32)
		if err != nil {
			return err
		}
		if (c == codeMap8 || c == codeMap32) && n%2 != 0 {
			return decodeErrorf("map with an odd count %d", n)
		}
		for range n {
			if err := sub.skip(); err != nil {
				return err
			}
		}
		return sub.done()
	case codeArray8, codeArray32:
		return d.skipArray(c)
	default:
		return decodeErrorf("unknown format code 0x%02x", c)
	}
	return err
}

func (d *decoder) skipArray(c byte) error {
	sub, n, err := d.compound(c == codeArray32)
	if err != nil {
		return err
	}
	ec, err := sub.byte()
	if err != nil {
		return err
	}
	if ec == codeDescribed {
		if _, err := sub.descriptor(); err != nil {
			return err
		}
		if ec, err = sub.byte(); err != nil {
			return err
		}
		if ec == codeDescribed {
			return decodeErrorf("array constructor with nested descriptors")
		}
	}
	if w := fixedWidth(ec); w > 0 && uint64(n)*uint64(w) > uint64(len(sub.b)) || n > len(sub.b) {
		return decodeErrorf("array of %d elements does not fit in %d bytes", n, len(sub.b))
	}
	for range n {
		if err := sub.skipBody(ec); err != nil {
			return err
		}
	}
	return sub.done()
}
