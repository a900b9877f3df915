package cosmos

// SetBeforeChange makes fn run in each conditional write of s between its
// plan (the items read) and its write: tests move the clock there.
func SetBeforeChange(s *Server, fn func()) { s.beforeChange = fn }
