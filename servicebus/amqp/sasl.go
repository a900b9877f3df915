package amqp

// SASL outcome codes (§5.3.3.6).
const (
	SASLCodeOK      uint8 = 0 // authentication succeeded
	SASLCodeAuth    uint8 = 1 // bad credentials
	SASLCodeSys     uint8 = 2 // system error
	SASLCodeSysPerm uint8 = 3 // permanent system error
	SASLCodeSysTemp uint8 = 4 // transient system error
)

// SASLMechanisms is the sasl-mechanisms frame body (§5.3.3.1): the
// mechanisms the server offers.
type SASLMechanisms struct {
	Mechanisms []Symbol
}

// SASLInit is the sasl-init frame body (§5.3.3.2): the mechanism the client
// chose and its initial response.
type SASLInit struct {
	Mechanism       Symbol
	InitialResponse []byte
	Hostname        string
}

// SASLChallenge is the sasl-challenge frame body (§5.3.3.3).
type SASLChallenge struct {
	Challenge []byte
}

// SASLResponse is the sasl-response frame body (§5.3.3.4).
type SASLResponse struct {
	Response []byte
}

// SASLOutcome is the sasl-outcome frame body (§5.3.3.5): the result of the
// exchange, one of the SASLCode constants.
type SASLOutcome struct {
	Code           uint8
	AdditionalData []byte
}

// Descriptor returns the numeric descriptor of sasl-mechanisms, 0x40.
func (*SASLMechanisms) Descriptor() uint64 { return descSASLMechanisms }

// Descriptor returns the numeric descriptor of sasl-init, 0x41.
func (*SASLInit) Descriptor() uint64 { return descSASLInit }

// Descriptor returns the numeric descriptor of sasl-challenge, 0x42.
func (*SASLChallenge) Descriptor() uint64 { return descSASLChallenge }

// Descriptor returns the numeric descriptor of sasl-response, 0x43.
func (*SASLResponse) Descriptor() uint64 { return descSASLResponse }

// Descriptor returns the numeric descriptor of sasl-outcome, 0x44.
func (*SASLOutcome) Descriptor() uint64 { return descSASLOutcome }

// AppendTo appends the encoded frame body to dst; nil encodes as null.
func (s *SASLMechanisms) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descSASLMechanisms)
	// The field is mandatory, so even an empty list is sent, as an array.
	w.value(s.Mechanisms)
	return w.finish()
}

func (s *SASLMechanisms) decodeFields(f *fields) {
	if s.Mechanisms = f.symbols(); s.Mechanisms == nil {
		f.missing("sasl-server-mechanisms")
	}
}

// AppendTo appends the encoded frame body to dst; nil encodes as null.
func (s *SASLInit) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descSASLInit)
	w.symbol(s.Mechanism)
	w.binary(s.InitialResponse)
	w.optString(s.Hostname)
	return w.finish()
}

func (s *SASLInit) decodeFields(f *fields) {
	var ok bool
	if s.Mechanism, ok = f.symbol(); !ok {
		f.missing("mechanism")
	}
	s.InitialResponse = f.binary()
	s.Hostname, _ = f.string()
}

// AppendTo appends the encoded frame body to dst; nil encodes as null.
func (s *SASLChallenge) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descSASLChallenge)
	w.binary(nonNil(s.Challenge))
	return w.finish()
}

func (s *SASLChallenge) decodeFields(f *fields) {
	if s.Challenge = f.binary(); s.Challenge == nil {
		f.missing("challenge")
	}
}

// AppendTo appends the encoded frame body to dst; nil encodes as null.
func (s *SASLResponse) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descSASLResponse)
	w.binary(nonNil(s.Response))
	return w.finish()
}

func (s *SASLResponse) decodeFields(f *fields) {
	if s.Response = f.binary(); s.Response == nil {
		f.missing("response")
	}
}

// AppendTo appends the encoded frame body to dst; nil encodes as null.
func (s *SASLOutcome) AppendTo(dst []byte) ([]byte, error) {
	if s == nil {
		return append(dst, codeNull), nil
	}
	w := beginComposite(dst, descSASLOutcome)
	w.ubyte(s.Code)
	w.binary(s.AdditionalData)
	return w.finish()
}

func (s *SASLOutcome) decodeFields(f *fields) {
	var ok bool
	if s.Code, ok = f.ubyte(); !ok {
		f.missing("code")
	}
	s.AdditionalData = f.binary()
}

// nonNil returns p, or an empty slice for nil, for mandatory binary fields.
func nonNil(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}
