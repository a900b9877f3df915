package servicebus

import (
	"strings"
)

// Path suffixes of the sub-queues every queue and subscription has.
const (
	suffixDLQ         = "/$DeadLetterQueue"
	suffixTransferDLQ = "/$Transfer/$DeadLetterQueue"
	suffixMgmt        = "/$management"
	subscriptionsPart = "/Subscriptions/"
	addrCBS           = "$cbs"
	addrMgmt          = "$management"
)

// subQueue says which queue of a queue or subscription an address names.
type subQueue uint8

const (
	subMain        subQueue = iota // the entity itself
	subDLQ                         // its dead-letter queue
	subTransferDLQ                 // its transfer dead-letter queue
)

// address is an AMQP link address taken apart: the queue or topic, the
// subscription if any, and the sub-queue. Names keep the client's case;
// lookups ignore case, as Service Bus does.
type address struct {
	entity string // queue or topic name
	sub    string // subscription name, or ""
	queue  subQueue
	mgmt   bool // the entity's $management node
}

// parseAddress reads a link address: "q", "t/Subscriptions/s", either with
// "/$DeadLetterQueue", "/$Transfer/$DeadLetterQueue" or "/$management", and
// the absolute forms "amqp://host/q" and "sb://host/q".
func parseAddress(a string) (address, bool) {
	if i := strings.Index(a, "://"); i >= 0 {
		rest := a[i+3:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return address{}, false
		}
		a = rest[j+1:]
	}
	a = strings.TrimPrefix(a, "/")
	var ad address
	lower := strings.ToLower(a)
	switch {
	case strings.HasSuffix(lower, strings.ToLower(suffixMgmt)):
		ad.mgmt = true
		a = a[:len(a)-len(suffixMgmt)]
	}
	lower = strings.ToLower(a)
	switch {
	case strings.HasSuffix(lower, strings.ToLower(suffixTransferDLQ)):
		ad.queue = subTransferDLQ
		a = a[:len(a)-len(suffixTransferDLQ)]
	case strings.HasSuffix(lower, strings.ToLower(suffixDLQ)):
		ad.queue = subDLQ
		a = a[:len(a)-len(suffixDLQ)]
	}
	lower = strings.ToLower(a)
	if i := strings.Index(lower, strings.ToLower(subscriptionsPart)); i >= 0 {
		ad.entity, ad.sub = a[:i], a[i+len(subscriptionsPart):]
		if ad.sub == "" || strings.Contains(ad.sub, "/") {
			return address{}, false
		}
	} else {
		ad.entity = a
	}
	if ad.entity == "" {
		return address{}, false
	}
	return ad, true
}

// path returns the entity path of the address without $management.
func (a address) path() string {
	p := a.entity
	if a.sub != "" {
		p += subscriptionsPart + a.sub
	}
	switch a.queue {
	case subDLQ:
		p += suffixDLQ
	case subTransferDLQ:
		p += suffixTransferDLQ
	}
	return p
}

// fold is the case-insensitive form of a name, the key of the server's
// tables.
func fold(name string) string { return strings.ToLower(name) }
