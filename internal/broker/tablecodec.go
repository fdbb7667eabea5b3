package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A held message waits on disk (heldstore.go) with its headers exactly as
// the broker delivered them: the replay republishes every header it did not
// change with its own field type (deliveredTable). amqp091-go decodes a
// table into these Go types and keeps its wire codec to itself, and gob
// would write its type descriptions into every record, so the few types
// are written here, each as a tag byte and its value:
//
//	t/n bool · b int8 · B uint8 · s int16 · u uint16 · I int32 · i uint32 ·
//	l int64 · f float32 · d float64 · D decimal · S string · x []byte ·
//	T time · F table · A array · V nil
//
// Lengths and integers are varints; floats are their IEEE bits.
const (
	tagFalse   = 'n'
	tagTrue    = 't'
	tagInt8    = 'b'
	tagUint8   = 'B'
	tagInt16   = 's'
	tagUint16  = 'u'
	tagInt32   = 'I'
	tagUint32  = 'i'
	tagInt64   = 'l'
	tagFloat32 = 'f'
	tagFloat64 = 'd'
	tagDecimal = 'D'
	tagString  = 'S'
	tagBytes   = 'x'
	tagTime    = 'T'
	tagTable   = 'F'
	tagArray   = 'A'
	tagNil     = 'V'
)

// maxFieldDepth bounds nesting as amqp091-go does on the wire.
const maxFieldDepth = 64

var errFieldDepth = errors.New("held message: headers nested too deep")

func appendTable(out []byte, t amqp.Table, depth int) ([]byte, error) {
	if depth > maxFieldDepth {
		return out, errFieldDepth
	}
	out = binary.AppendUvarint(out, uint64(len(t)))
	for k, v := range t {
		out = appendString(out, k)
		var err error
		if out, err = appendField(out, v, depth+1); err != nil {
			return out, err
		}
	}
	return out, nil
}

func appendString(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

func appendField(out []byte, v any, depth int) ([]byte, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return append(out, tagTrue), nil
		}
		return append(out, tagFalse), nil
	case int8:
		return append(out, tagInt8, byte(v)), nil
	case uint8:
		return append(out, tagUint8, v), nil
	case int16:
		return binary.AppendVarint(append(out, tagInt16), int64(v)), nil
	case uint16:
		return binary.AppendUvarint(append(out, tagUint16), uint64(v)), nil
	case int32:
		return binary.AppendVarint(append(out, tagInt32), int64(v)), nil
	case uint32:
		return binary.AppendUvarint(append(out, tagUint32), uint64(v)), nil
	case int64:
		return binary.AppendVarint(append(out, tagInt64), v), nil
	case float32:
		return binary.BigEndian.AppendUint32(append(out, tagFloat32), math.Float32bits(v)), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(out, tagFloat64), math.Float64bits(v)), nil
	case amqp.Decimal:
		return binary.AppendVarint(append(out, tagDecimal, v.Scale), int64(v.Value)), nil
	case string:
		return appendString(append(out, tagString), v), nil
	case []byte:
		return appendString(append(out, tagBytes), string(v)), nil
	case time.Time:
		return binary.AppendVarint(append(out, tagTime), v.Unix()), nil
	case amqp.Table:
		return appendTable(append(out, tagTable), v, depth)
	case []any:
		if depth > maxFieldDepth {
			return out, errFieldDepth
		}
		out = binary.AppendUvarint(append(out, tagArray), uint64(len(v)))
		for _, e := range v {
			var err error
			if out, err = appendField(out, e, depth+1); err != nil {
				return out, err
			}
		}
		return out, nil
	case nil:
		return append(out, tagNil), nil
	}
	return out, fmt.Errorf("held message: a header of type %T cannot be kept", v)
}

// fieldReader reads what appendTable wrote; the first error sticks.
type fieldReader struct {
	b   []byte
	err error
}

func (r *fieldReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *fieldReader) byte() byte {
	if len(r.b) == 0 {
		r.fail(errors.New("held message: record cut short"))
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fieldReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errors.New("held message: bad length"))
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *fieldReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(errors.New("held message: bad integer"))
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *fieldReader) fixed(n int) []byte {
	if len(r.b) < n {
		r.fail(errors.New("held message: record cut short"))
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *fieldReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(errors.New("held message: length past the record"))
		return nil
	}
	return r.fixed(int(n))
}

func (r *fieldReader) string() string { return string(r.bytes()) }

func (r *fieldReader) table(depth int) amqp.Table {
	if depth > maxFieldDepth {
		r.fail(errFieldDepth)
		return nil
	}
	n := r.uvarint()
	if n > uint64(len(r.b)) { // every entry takes a byte at least
		r.fail(errors.New("held message: table longer than the record"))
		return nil
	}
	t := make(amqp.Table, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		k := r.string()
		t[k] = r.field(depth + 1)
	}
	return t
}

func (r *fieldReader) field(depth int) any {
	switch tag := r.byte(); tag {
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt8:
		return int8(r.byte())
	case tagUint8:
		return r.byte()
	case tagInt16:
		return int16(r.varint())
	case tagUint16:
		return uint16(r.uvarint())
	case tagInt32:
		return int32(r.varint())
	case tagUint32:
		return uint32(r.uvarint())
	case tagInt64:
		return r.varint()
	case tagFloat32:
		return math.Float32frombits(binary.BigEndian.Uint32(r.fixed(4)))
	case tagFloat64:
		return math.Float64frombits(binary.BigEndian.Uint64(r.fixed(8)))
	case tagDecimal:
		scale := r.byte()
		return amqp.Decimal{Scale: scale, Value: int32(r.varint())}
	case tagString:
		return r.string()
	case tagBytes:
		return append([]byte{}, r.bytes()...)
	case tagTime:
		return time.Unix(r.varint(), 0)
	case tagTable:
		return r.table(depth)
	case tagArray:
		if depth > maxFieldDepth {
			r.fail(errFieldDepth)
			return nil
		}
		n := r.uvarint()
		if n > uint64(len(r.b)) {
			r.fail(errors.New("held message: array longer than the record"))
			return nil
		}
		a := make([]any, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			a = append(a, r.field(depth+1))
		}
		return a
	case tagNil:
		return nil
	default:
		r.fail(fmt.Errorf("held message: unknown field tag %q", tag))
		return nil
	}
}
