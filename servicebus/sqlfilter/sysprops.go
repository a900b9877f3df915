package sqlfilter

import "strings"

// sysProp describes one system property: the public properties of the
// service's BrokeredMessage, looked up case-insensitively ("sys.label" is
// sys.Label). Subject, the name the current SDKs use, is an alias of Label.
type sysProp struct {
	name     string // canonical name, as Message.System receives it
	settable bool   // SET may assign it
	kind     kind   // the type SET converts to
}

// sysProps is keyed by lower-case name.
var sysProps = func() map[string]sysProp {
	m := map[string]sysProp{}
	add := func(name string, settable bool, k kind) {
		m[strings.ToLower(name)] = sysProp{name: name, settable: settable, kind: k}
	}
	for _, name := range []string{"MessageId", "CorrelationId", "To", "ReplyTo", "Label",
		"SessionId", "ReplyToSessionId", "ContentType", "PartitionKey"} {
		add(name, true, kString)
	}
	add("ScheduledEnqueueTimeUtc", true, kTime)
	add("TimeToLive", true, kDuration)
	add("DeliveryCount", false, kInt)
	add("EnqueuedTimeUtc", false, kTime)
	add("SequenceNumber", false, kInt)
	add("EnqueuedSequenceNumber", false, kInt)
	add("Size", false, kInt)
	add("ExpiresAtUtc", false, kTime)
	add("LockToken", false, kUUID)
	add("LockedUntilUtc", false, kTime)
	add("DeadLetterSource", false, kString)
	add("State", false, kString)
	m["subject"] = m["label"]
	return m
}()

// lookupSysProp resolves a system property name written in an expression.
func lookupSysProp(name string) (sysProp, bool) {
	p, ok := sysProps[strings.ToLower(name)]
	return p, ok
}
