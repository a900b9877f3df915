package server

import (
	"flag"
	"io"
)

// UsageError is a mistake on the command line: the lapse command prints
// it with its usage and exits 2. ParseFlags returns one for a bad flag.
//
// It names the unexported type that flags.go builds, so that the command's
// subcommands and `lapse serve` share one kind of usage mistake.
type UsageError = usageError

// EnvString defines a string flag on fs whose default comes from its
// environment variable (LAPSE_ and the flag's name in capitals, dashes as
// underscores) when getenv gives one that is not empty.
func EnvString(fs *flag.FlagSet, getenv func(string) string, p *string, name, def, usage string) {
	envString(fs, getenv, p, name, def, usage)
}

// ParseArgs parses args with fs as ParseFlags does and returns the
// positional arguments; with interleaved, flags may also follow them. -h
// prints the flags to help and gives flag.ErrHelp; other mistakes are a
// *UsageError.
func ParseArgs(fs *flag.FlagSet, args []string, interleaved bool, help io.Writer) ([]string, error) {
	return parseFlags(fs, args, interleaved, help)
}
