package cosmos

import (
	"github.com/lapse-emulator/lapse/cosmos/query"
	"github.com/lapse-emulator/lapse/cosmos/script"
)

// udfResolver returns the resolver of ct's user-defined functions for one
// run of a query (query.Options.UDF): the functions it names are compiled
// into one sandbox at their first call, and each call runs there under
// the scripts' bounds, with JSON values in and out. nil when ct has none.
func (s *Server) udfResolver(ct *container) func(name string) (query.UDF, bool) {
	if len(ct.meta.Scripts[kindUDFs.path]) == 0 {
		return nil
	}
	srcs := map[string]string{}
	var (
		fns *script.Functions
		err error
	)
	return func(name string) (query.UDF, bool) {
		sc, ok := ct.scriptSource(kindUDFs, name)
		if !ok {
			return nil, false
		}
		srcs[name] = sc.Body
		return func(args []any) (any, error) {
			if fns == nil && err == nil {
				fns, err = s.scripts.Functions(srcs)
			}
			if err != nil {
				return nil, scriptError(err)
			}
			in := make([][]byte, len(args))
			for i, a := range args {
				in[i] = query.AppendJSON(nil, a)
			}
			out, err := fns.Call(name, in)
			if err != nil {
				return nil, scriptError(err)
			}
			if out == nil {
				return query.Undefined, nil
			}
			return query.Decode(out)
		}, true
	}
}
