# Prerequisites that make cannot build: checked when make reads the
# Makefile for 'test' (before any rule runs), and by 'make prereq'.

ifneq ($(filter test,$(MAKECMDGOALS)),)
# The script writes its list to stderr, which $(shell) leaves on the terminal.
ifneq ($(shell bash hack/prereq.sh >&2; echo $$?),0)
$(error install the prerequisites above, then run make test again)
endif
endif

.PHONY: prereq
prereq: ## check the prerequisites of make test (Go, git, a C compiler, kpt)
	@bash hack/prereq.sh && echo "prerequisites found: go, git, $${CC:-gcc}, $${KPT_BIN:-kpt}"
