package sqlfilter

// MaxActionStatements is the most SET and REMOVE statements one rule action
// may hold (Service Bus quotas: "Maximum number of expressions per rule
// action: 32").
const MaxActionStatements = 32

// MutableMessage is what an action changes.
type MutableMessage interface {
	Message
	// SetSystem sets a system property by its canonical name; v is nil or
	// of the property's type (string, time.Time for
	// ScheduledEnqueueTimeUtc, time.Duration for TimeToLive). An error
	// fails the action.
	SetSystem(name string, v any) error
	// SetUser sets an application property, the one UserFold finds, adding
	// it if there is none.
	SetUser(name string, v any)
	// RemoveUser removes the application properties UserFold would find.
	RemoveUser(name string)
}

// Action is a compiled SQL rule action, safe for concurrent use.
type Action struct {
	expr  string
	stmts []statement
}

// statement is one SET or REMOVE.
type statement struct {
	remove bool
	sys    bool
	name   string // canonical for a system property
	to     kind   // system property: the type the value is converted to
	value  evalFn
}

// CompileAction parses a SQL rule action: SET and REMOVE statements, each
// optionally ended by ';' ("SET quantity = quantity / 2; REMOVE priority;
// SET sys.CorrelationId = 'low'"). SET may assign a user property or a
// settable system property (MessageId, CorrelationId, To, ReplyTo, Label or
// Subject, SessionId, ReplyToSessionId, ContentType, PartitionKey,
// ScheduledEnqueueTimeUtc, TimeToLive); REMOVE removes a user property.
// Parameters work as in Compile. Errors are core.EINVALID.
func CompileAction(expr string, params map[string]any) (*Action, error) {
	p, err := parse(expr, params, "SQL rule action expression")
	if err != nil {
		return nil, err
	}
	a := &Action{expr: expr}
	for p.peek().kind != tEOF {
		t := p.next()
		if t.kind != tKeyword || t.text != "SET" && t.text != "REMOVE" {
			return nil, unexpected(expr, t, "SET, or REMOVE")
		}
		prop, err := p.property()
		if err != nil {
			return nil, err
		}
		st := statement{remove: t.text == "REMOVE", sys: prop.sys, name: prop.text}
		if st.sys {
			sp, _ := lookupSysProp(prop.text)
			if st.remove || !sp.settable {
				verb := "set"
				if st.remove {
					verb = "removed"
				}
				return nil, semanticError("The system property '%s' cannot be %s by a rule action.", sp.name, verb)
			}
			st.to = sp.kind
		}
		if !st.remove {
			if err := p.expectOp("="); err != nil {
				return nil, err
			}
			v, err := p.expression()
			if err != nil {
				return nil, err
			}
			st.value = compileExpr(v)
		}
		if p.isOp(";") {
			p.next()
		}
		a.stmts = append(a.stmts, st)
		if len(a.stmts) > MaxActionStatements {
			return nil, semanticError("The SQL rule action has more than %d statements.", MaxActionStatements)
		}
	}
	if len(a.stmts) == 0 {
		return nil, unexpected(expr, p.peek(), "SET, or REMOVE")
	}
	if err := p.checkParams(); err != nil {
		return nil, err
	}
	return a, nil
}

// Apply runs the statements in order against m, each seeing the changes of
// those before it. SET of an unknown value stores nil. SET converts the
// value to the type of the property it replaces, as the service does
// ("SET performs implicit conversion if possible"): to the existing user
// property's type when it has a non-nil value, to the system property's
// type otherwise (string, time.Time for ScheduledEnqueueTimeUtc,
// time.Duration for TimeToLive). Apply stops at the first error and leaves
// the statements before it applied, so apply it to a copy of the message.
func (a *Action) Apply(m MutableMessage) error {
	for _, st := range a.stmts {
		if st.remove {
			m.RemoveUser(st.name)
			continue
		}
		v, err := st.value(m)
		if err != nil {
			return err
		}
		if st.sys {
			if v.k != kNull {
				if v, err = convert(v, st.to); err != nil {
					return err
				}
			}
			if err := m.SetSystem(st.name, v.toGo()); err != nil {
				return err
			}
			continue
		}
		if old, ok := m.UserFold(st.name); ok && v.k != kNull {
			if o := fromGo(old); o.k != kNull && o.k != kOther {
				if v, err = convert(v, o.k); err != nil {
					return err
				}
			}
		}
		m.SetUser(st.name, v.toGo())
	}
	return nil
}

// String returns the expression as given to CompileAction.
func (a *Action) String() string { return a.expr }
