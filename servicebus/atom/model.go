package atom

import (
	"time"

	"github.com/lapse-emulator/lapse/adapters"
)

// QueueProperties are a queue's settable properties (QueueDescription).
type QueueProperties struct {
	LockDuration                        time.Duration // default 1 minute
	MaxSizeInMegabytes                  int32         // default 1024
	RequiresDuplicateDetection          bool
	RequiresSession                     bool
	DefaultMessageTimeToLive            time.Duration // default adapters.TimeSpanMax
	DeadLetteringOnMessageExpiration    bool
	DuplicateDetectionHistoryTimeWindow time.Duration // default 10 minutes
	MaxDeliveryCount                    int32         // default 10
	EnableBatchedOperations             bool          // default true
	Status                              string        // default "Active"
	AutoDeleteOnIdle                    time.Duration // default adapters.TimeSpanMax
	EnablePartitioning                  bool
	ForwardTo                           string
	ForwardDeadLetteredMessagesTo       string
	UserMetadata                        string
	MaxMessageSizeInKilobytes           int64 // default 256
}

// TopicProperties are a topic's settable properties (TopicDescription).
type TopicProperties struct {
	DefaultMessageTimeToLive            time.Duration // default adapters.TimeSpanMax
	MaxSizeInMegabytes                  int32         // default 1024
	RequiresDuplicateDetection          bool
	DuplicateDetectionHistoryTimeWindow time.Duration // default 10 minutes
	EnableBatchedOperations             bool          // default true
	Status                              string        // default "Active"
	AutoDeleteOnIdle                    time.Duration // default adapters.TimeSpanMax
	EnablePartitioning                  bool
	SupportOrdering                     bool // default true
	UserMetadata                        string
	MaxMessageSizeInKilobytes           int64 // default 256
}

// SubscriptionProperties are a subscription's settable properties
// (SubscriptionDescription).
type SubscriptionProperties struct {
	LockDuration                              time.Duration // default 1 minute
	RequiresSession                           bool
	DefaultMessageTimeToLive                  time.Duration // default adapters.TimeSpanMax
	DeadLetteringOnMessageExpiration          bool
	DeadLetteringOnFilterEvaluationExceptions bool          // default true
	MaxDeliveryCount                          int32         // default 10
	EnableBatchedOperations                   bool          // default true
	Status                                    string        // default "Active"
	AutoDeleteOnIdle                          time.Duration // default adapters.TimeSpanMax
	ForwardTo                                 string
	ForwardDeadLetteredMessagesTo             string
	UserMetadata                              string
	// DefaultRule, only on create, replaces the $Default rule the service
	// otherwise gives a new subscription (DefaultRuleDescription). It is
	// never written back.
	DefaultRule *RuleProperties
}

// FilterType is the type of a rule's filter, as the service names it in
// the filter's i:type.
type FilterType string

// The filter types.
const (
	SQLFilter         FilterType = "SqlFilter"
	CorrelationFilter FilterType = "CorrelationFilter"
	TrueFilter        FilterType = "TrueFilter"  // a SqlFilter "1=1"
	FalseFilter       FilterType = "FalseFilter" // a SqlFilter "1=0"
)

// RuleProperties are a subscription rule (RuleDescription).
type RuleProperties struct {
	Name   string
	Filter Filter
	// Action is the rule's SqlRuleAction; nil is the EmptyRuleAction.
	Action *Action
}

// Filter is a rule's filter. SQLExpression and Parameters belong to the SQL
// types (TrueFilter and FalseFilter have "1=1" and "1=0"), Correlation to
// CorrelationFilter.
type Filter struct {
	Type          FilterType
	SQLExpression string
	// Parameters are the SQL expression's @parameters. Values are string,
	// bool, int32, int64, float32, float64, time.Time or time.Duration,
	// written as xs:string, boolean, int, long, float, double, dateTime
	// and duration.
	Parameters  map[string]any
	Correlation Correlation
}

// Correlation is a CorrelationFilter: every non-empty field, and every
// application property, must equal the message's. Subject is the service's
// Label.
type Correlation struct {
	CorrelationID, MessageID, To, ReplyTo, Subject, SessionID, ReplyToSessionID, ContentType string
	// Properties are the application properties to match; values as
	// Filter.Parameters.
	Properties map[string]any
}

// Action is a SqlRuleAction.
type Action struct {
	SQLExpression string
	Parameters    map[string]any
}

// DefaultQueue returns a queue's properties as the service defaults them.
func DefaultQueue() QueueProperties {
	return QueueProperties{
		LockDuration:                        time.Minute,
		MaxSizeInMegabytes:                  1024,
		DefaultMessageTimeToLive:            adapters.TimeSpanMax,
		DuplicateDetectionHistoryTimeWindow: 10 * time.Minute,
		MaxDeliveryCount:                    10,
		EnableBatchedOperations:             true,
		Status:                              StatusActive,
		AutoDeleteOnIdle:                    adapters.TimeSpanMax,
		MaxMessageSizeInKilobytes:           256,
	}
}

// DefaultTopic returns a topic's properties as the service defaults them.
func DefaultTopic() TopicProperties {
	return TopicProperties{
		DefaultMessageTimeToLive:            adapters.TimeSpanMax,
		MaxSizeInMegabytes:                  1024,
		DuplicateDetectionHistoryTimeWindow: 10 * time.Minute,
		EnableBatchedOperations:             true,
		Status:                              StatusActive,
		AutoDeleteOnIdle:                    adapters.TimeSpanMax,
		SupportOrdering:                     true,
		MaxMessageSizeInKilobytes:           256,
	}
}

// DefaultSubscription returns a subscription's properties as the service
// defaults them.
func DefaultSubscription() SubscriptionProperties {
	return SubscriptionProperties{
		LockDuration:                              time.Minute,
		DefaultMessageTimeToLive:                  adapters.TimeSpanMax,
		DeadLetteringOnFilterEvaluationExceptions: true,
		MaxDeliveryCount:                          10,
		EnableBatchedOperations:                   true,
		Status:                                    StatusActive,
		AutoDeleteOnIdle:                          adapters.TimeSpanMax,
	}
}

// DefaultRuleName is the name of the rule a subscription gets when it is
// created without one.
const DefaultRuleName = "$Default"

// DefaultRule returns the rule a new subscription gets: $Default, a
// TrueFilter ("1=1") and no action.
func DefaultRule() RuleProperties {
	return RuleProperties{Name: DefaultRuleName, Filter: Filter{Type: TrueFilter, SQLExpression: "1=1"}}
}

// StatusActive is an entity's default status. The others the service
// knows are Disabled, SendDisabled and ReceiveDisabled (and, transiently,
// Creating, Deleting, Renaming, Restoring, Unknown).
const StatusActive = "Active"

// Runtime is what the server reports about an entity besides its
// properties: counts (CountDetails), size and times.
type Runtime struct {
	ActiveMessageCount, DeadLetterMessageCount, ScheduledMessageCount, TransferMessageCount, TransferDeadLetterMessageCount int64
	SizeInBytes                                                                                                             int64
	// SubscriptionCount is a topic's number of subscriptions.
	SubscriptionCount int32
	// SQLFilterCount and CorrelationFilterCount are a topic's numbers of
	// SQL rules ($Default's TrueFilter counts) and correlation rules over
	// all its subscriptions (SqlFilterCount, CorrelationFilterCount, which
	// the Go admin client reads into TopicRuntimeProperties).
	SQLFilterCount, CorrelationFilterCount int32
	CreatedAt, UpdatedAt, AccessedAt       time.Time
}

// MessageCount is the total the service reports as MessageCount: every
// count of CountDetails added up.
func (r Runtime) MessageCount() int64 {
	return r.ActiveMessageCount + r.DeadLetterMessageCount + r.ScheduledMessageCount +
		r.TransferMessageCount + r.TransferDeadLetterMessageCount
}

// Kind is the kind of an entity the management API manages.
type Kind uint8

// The kinds. The zero Kind is none.
const (
	KindQueue Kind = iota + 1
	KindTopic
	KindSubscription
	KindRule
)

// String returns the kind as the service names it: "Queue", "Topic",
// "Subscription" or "Rule".
func (k Kind) String() string {
	switch k {
	case KindQueue:
		return "Queue"
	case KindTopic:
		return "Topic"
	case KindSubscription:
		return "Subscription"
	case KindRule:
		return "Rule"
	}
	return "Entity"
}

// Path names an entity: Entity is the queue's or topic's name, Subscription
// and Rule are set for the kinds below a topic.
type Path struct {
	Kind               Kind
	Entity             string
	Subscription, Rule string
}

// String returns the path as the service writes it in URLs:
// "q", "t/Subscriptions/s", "t/Subscriptions/s/Rules/r".
func (p Path) String() string {
	switch p.Kind {
	case KindSubscription:
		return p.Entity + "/Subscriptions/" + p.Subscription
	case KindRule:
		return p.Entity + "/Subscriptions/" + p.Subscription + "/Rules/" + p.Rule
	}
	return p.Entity
}

// Name returns the entity's own name, the last part of its path (the ATOM
// entry's title).
func (p Path) Name() string {
	switch p.Kind {
	case KindSubscription:
		return p.Subscription
	case KindRule:
		return p.Rule
	}
	return p.Entity
}

// Entry is one entity: its path, the properties of its kind (exactly one
// of Queue, Topic, Subscription and Rule is set) and its runtime
// information (ignored by Backend.Put).
type Entry struct {
	Path         Path
	Queue        *QueueProperties
	Topic        *TopicProperties
	Subscription *SubscriptionProperties
	Rule         *RuleProperties
	Runtime      Runtime
}

// NamespaceInfo is what GET /$namespaceinfo returns.
type NamespaceInfo struct {
	Name                  string
	CreatedAt, ModifiedAt time.Time
	// MessagingSKU is "Basic", "Standard" (the default for "") or "Premium".
	MessagingSKU string
	// MessagingUnits, premium only, is written when above 0.
	MessagingUnits int32
	// NamespaceType defaults to "Messaging".
	NamespaceType string
}

// Backend is what the handler manages: the server's entities. Errors are
// *core.Error: ENOTFOUND (404), EINVALID (400, its message goes after
// "SubCode=40000. "), ECONFLICT (409), EUNAUTHORIZED (401), ETOOLARGE (403,
// a quota), EUNAVAILABLE (503); anything else is a 500 whose text is only
// logged.
type Backend interface {
	// Get returns the entity at p, ENOTFOUND if there is none.
	Get(p Path) (Entry, error)
	// Put creates the entity (update false: ECONFLICT if it exists) or
	// replaces its properties (update true, the client's If-Match: *:
	// ENOTFOUND if it does not exist) and returns it as stored. It
	// validates the properties (EINVALID).
	Put(e Entry, update bool) (Entry, error)
	// Delete deletes the entity at p and what is below it, ENOTFOUND if
	// there is none.
	Delete(p Path) error
	// List returns the entities of kind under parent (the zero Path for
	// queues and topics, the topic for subscriptions, the subscription for
	// rules) in a stable order, skipping skip and returning at most top.
	List(kind Kind, parent Path, skip, top int) ([]Entry, error)
	// NamespaceInfo describes the namespace.
	NamespaceInfo() NamespaceInfo
}
