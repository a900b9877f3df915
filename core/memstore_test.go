package core_test

import (
	"testing"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

func TestMemStoreKeepsTheStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (core.Store, func() core.Store) {
		s := core.NewMemStore()
		return s, func() core.Store { return s }
	})
}
