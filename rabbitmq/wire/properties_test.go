package wire

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// allProperties returns Properties with every property set.
func allProperties() Properties {
	return Properties{
		Flags: FlagContentType | FlagContentEncoding | FlagHeaders | FlagDeliveryMode | FlagPriority |
			FlagCorrelationID | FlagReplyTo | FlagExpiration | FlagMessageID | FlagTimestamp |
			FlagType | FlagUserID | FlagAppID | FlagClusterID,
		ContentType:     "application/json",
		ContentEncoding: "gzip",
		Headers:         everyFieldType(),
		DeliveryMode:    2,
		Priority:        9,
		CorrelationID:   "corr-1",
		ReplyTo:         "amq.rabbitmq.reply-to",
		Expiration:      "60000",
		MessageID:       "msg-1",
		Timestamp:       time.Unix(1700000000, 0).UTC(),
		Type:            "order.created",
		UserID:          "guest",
		AppID:           "lapse",
		ClusterID:       "cluster",
	}
}

func TestPropertiesRoundTrip(t *testing.T) {
	all := allProperties()
	// one returns Properties holding only the property of flag, taken from
	// all, with the flag set.
	one := func(flag uint16) Properties {
		p := Properties{Flags: flag}
		switch flag {
		case FlagContentType:
			p.ContentType = all.ContentType
		case FlagContentEncoding:
			p.ContentEncoding = all.ContentEncoding
		case FlagHeaders:
			p.Headers = all.Headers
		case FlagDeliveryMode:
			p.DeliveryMode = all.DeliveryMode
		case FlagPriority:
			p.Priority = all.Priority
		case FlagCorrelationID:
			p.CorrelationID = all.CorrelationID
		case FlagReplyTo:
			p.ReplyTo = all.ReplyTo
		case FlagExpiration:
			p.Expiration = all.Expiration
		case FlagMessageID:
			p.MessageID = all.MessageID
		case FlagTimestamp:
			p.Timestamp = all.Timestamp
		case FlagType:
			p.Type = all.Type
		case FlagUserID:
			p.UserID = all.UserID
		case FlagAppID:
			p.AppID = all.AppID
		case FlagClusterID:
			p.ClusterID = all.ClusterID
		}
		return p
	}
	cases := map[string]Properties{
		"None":                   {},
		"All":                    all,
		"EmptyStringsPresent":    {Flags: FlagContentType | FlagType | FlagClusterID | FlagReplyTo},
		"ZeroOctetsPresent":      {Flags: FlagDeliveryMode | FlagPriority},
		"EmptyHeadersPresent":    {Flags: FlagHeaders},
		"EpochTimestampPresent":  {Flags: FlagTimestamp, Timestamp: time.Unix(0, 0).UTC()},
		"FirstAndLastOnly":       {Flags: FlagContentType | FlagClusterID, ContentType: "a", ClusterID: "z"},
		"ShortStringOf255Octets": {Flags: FlagMessageID, MessageID: string(bytes.Repeat([]byte{'m'}, 255))},
	}
	for flag := FlagContentType; flag >= FlagClusterID; flag >>= 1 {
		cases["Only"+flagName(flag)] = one(flag)
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			b := want.Append(nil)
			got, err := DecodeProperties(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if again := got.Append(nil); !bytes.Equal(again, b) {
				t.Errorf("re-encoding differs:\n% x\n% x", b, again)
			}
		})
	}
}

// flagName names a property flag for a subtest.
func flagName(flag uint16) string {
	return map[uint16]string{
		FlagContentType: "ContentType", FlagContentEncoding: "ContentEncoding", FlagHeaders: "Headers",
		FlagDeliveryMode: "DeliveryMode", FlagPriority: "Priority", FlagCorrelationID: "CorrelationID",
		FlagReplyTo: "ReplyTo", FlagExpiration: "Expiration", FlagMessageID: "MessageID",
		FlagTimestamp: "Timestamp", FlagType: "Type", FlagUserID: "UserID", FlagAppID: "AppID",
		FlagClusterID: "ClusterID",
	}[flag]
}

func TestPropertiesEmptyStringPresentVersusAbsent(t *testing.T) {
	present := (&Properties{Flags: FlagCorrelationID}).Append(nil)
	absent := (&Properties{}).Append(nil)
	if want := []byte{0x04, 0x00, 0}; !bytes.Equal(present, want) {
		t.Errorf("present empty correlation-id: % x, want % x", present, want)
	}
	if want := []byte{0, 0}; !bytes.Equal(absent, want) {
		t.Errorf("absent: % x, want % x", absent, want)
	}
	p, err := DecodeProperties(present)
	if err != nil || p.Flags != FlagCorrelationID || p.CorrelationID != "" {
		t.Errorf("DecodeProperties(present) = %+v, %v", p, err)
	}
}

func TestPropertiesPresentImpliedByValues(t *testing.T) {
	p := Properties{ContentType: "text/plain", DeliveryMode: 2, Headers: map[string]any{}, Timestamp: time.Unix(1, 0)}
	want := FlagContentType | FlagDeliveryMode | FlagHeaders | FlagTimestamp
	if got := p.Present(); got != want {
		t.Errorf("Present() = %016b, want %016b", got, want)
	}
	if got := (&Properties{Flags: 0xFFFF}).Present(); got != 0xFFFC {
		t.Errorf("Present() keeps the continuation or unused bit: %016b", got)
	}
}

func TestPropertiesGoldenBytes(t *testing.T) {
	p := Properties{
		ContentType:  "t",
		DeliveryMode: 2,
		Timestamp:    time.Unix(258, 0),
		Headers:      map[string]any{"k": int8(-1)},
	}
	want := []byte{
		0xB0, 0x40, // content-type, headers, delivery-mode; timestamp
		1, 't',
		0, 0, 0, 4, 1, 'k', 'b', 0xFF,
		2,
		0, 0, 0, 0, 0, 0, 1, 2,
	}
	if got := p.Append(nil); !bytes.Equal(got, want) {
		t.Errorf("Append:\n got % x\nwant % x", got, want)
	}
}

func TestPropertiesContinuationFlags(t *testing.T) {
	// A continuation word that announces nothing is accepted.
	b := []byte{0x80, 0x01, 0x00, 0x00, 1, 'x'}
	p, err := DecodeProperties(b)
	if err != nil || p.ContentType != "x" || p.Flags != FlagContentType {
		t.Errorf("DecodeProperties(continued) = %+v, %v", p, err)
	}
	for name, b := range map[string][]byte{
		"ContinuationNamesAProperty": {0x00, 0x01, 0x80, 0x00},
		"MissingContinuationWord":    {0x00, 0x01},
		"UnusedBit1":                 {0x00, 0x02},
		"NoFlags":                    {},
		"OneOctetOfFlags":            {0x80},
		"TrailingOctets":             {0x00, 0x00, 0x01},
		"TruncatedShortString":       {0x80, 0x00, 5, 'a'},
		"TruncatedTimestamp":         {0x00, 0x40, 0, 0, 0},
		"TruncatedHeaders":           {0x20, 0x00, 0, 0, 0, 9, 1, 'k'},
		"MissingDeliveryMode":        {0x10, 0x00},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeProperties(b); !isCode(err, malformedCode) {
				t.Errorf("DecodeProperties(% x) = %v, want a %d error", b, err, malformedCode)
			}
		})
	}
}
