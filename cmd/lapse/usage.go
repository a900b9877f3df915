package main

import (
	"errors"
	"flag"
	"io"

	"github.com/lapse-emulator/lapse/server"
)

// usageError is a mistake on the command line (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// asUsage turns a *server.UsageError, a mistake in the flags of `lapse
// serve`, into a usageError; other errors are returned as they are.
func asUsage(err error) error {
	if ue, ok := errors.AsType[*server.UsageError](err); ok {
		return &usageError{ue.Error()}
	}
	return err
}

// envString defines a string flag whose default comes from its environment
// variable when that is set and not empty (server.EnvString).
func envString(fs *flag.FlagSet, getenv func(string) string, p *string, name, def, usage string) {
	server.EnvString(fs, getenv, p, name, def, usage)
}

// parseFlags parses args with fs and returns the positional arguments
// (server.ParseArgs); a mistake is a usageError.
func parseFlags(fs *flag.FlagSet, args []string, interleaved bool, help io.Writer) ([]string, error) {
	pos, err := server.ParseArgs(fs, args, interleaved, help)
	return pos, asUsage(err)
}
