// Package sqlfilter is Azure Service Bus's subscription rule language: SQL
// filters, SQL rule actions and correlation filters, evaluated against a
// message's properties. It does no I/O.
//
// The grammar and semantics are those of Microsoft's "Subscription Rule SQL
// Filter Syntax" and "Subscription Rule SQL Action Syntax" articles, and,
// where they are silent, of the broker's own evaluator:
//
//   - Keywords (AND, OR, NOT, IN, LIKE, ESCAPE, IS, NULL, EXISTS, TRUE,
//     FALSE, SET, REMOVE) and function names (newid, property, p) are
//     case-insensitive. A property is [sys.|user.]name, where name is a
//     regular identifier (a letter, then letters, digits and '_'), a
//     [delimited identifier] or a "quoted identifier"; user is the default
//     scope. Property names are case-insensitive, as the article says:
//     "sys.label" is sys.Label, sys.Subject is sys.Label, and "Color" names
//     a message's application property color (the SDKs' own tests against
//     the service rely on it). A Message implementation resolves a user
//     property's case: the one of that exact name first, else the first
//     that differs in case only.
//   - Naming a system property that does not exist is a compile error; a
//     missing user property is unknown, as is NULL and a nil value.
//   - Logic is three-valued (the article's AND and OR tables); a filter
//     matches only when it is TRUE. Arithmetic and comparisons with an
//     unknown operand are unknown; so are LIKE with any unknown operand and
//     IN with an unknown left side. IS NULL is TRUE for a missing property.
//   - Constants: 1894 is a long (int64), 1894.1204 and 101.5E5 are doubles
//     (float64), text in single quotes is a string (a quote inside is
//     doubled), TRUE and FALSE are booleans. An @parameter is replaced by
//     its value at compile time. TRUE or FALSE alone is accepted as a
//     filter, though the grammar asks for a predicate such as 1=1.
//   - Operators bind as C#'s do, which the article promises: long and
//     double mix as double, long arithmetic is checked (overflow and
//     division by zero are errors), '+' with a string concatenates, strings
//     and booleans support only = and <> (strings compare ordinally), and
//     DateTime and TimeSpan (time.Time, time.Duration) compare and combine
//     as in .NET. Other pairings, such as 'a' = 1 or 'a' < 'b', are errors
//     at evaluation, as the broker's runtime binder raises them; Match
//     returns them, and the service would dead-letter the message.
//   - IN compares with =, but a list item of another type is just not equal.
//   - LIKE converts its operands to text, is case-sensitive, and takes '%'
//     for any run of characters and '_' for one; ESCAPE names a character
//     that makes the next one literal. (The broker translates the pattern
//     to a .NET regular expression, where '%' and '_' do not match a line
//     feed; here they do.)
//   - newid() returns a random UUID as [16]byte; property(name) and
//     p(name) read the user property whose name the argument computes.
//   - A SET converts the value to the type of the property it replaces; see
//     Action.Apply.
//
// Values read from messages may be nil, bool, string, any integer type (as
// int64; a uint64 above math.MaxInt64 as float64), float32 or float64,
// time.Time, time.Duration, or a UUID as any [16]byte type; named types of
// those kinds work too. A UUID compares equal to its text ('8-4-4-4-12',
// any case, braces allowed), which .NET would refuse; other values are
// opaque and support only IS NULL and EXISTS. Values written by actions are
// nil, bool, int64, float64, string, time.Time, time.Duration or [16]byte.
//
// Limits are the service's: an expression has at most 1,024 characters, an
// action at most 32 statements; nesting is limited to 64 levels and strings
// built by '+' to 32,767 characters. Syntax errors use the service's
// wording, "There was an error parsing the SQL expression. [Token line=1,
// column=7, Token in error=..., Additional details=...]", with columns
// counted from 0 in characters. All errors are core.EINVALID.
package sqlfilter
