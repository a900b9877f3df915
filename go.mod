module github.com/lapse-emulator/lapse

go 1.26
