// Package tmplsandbox is the one sandbox for Go templates with sprig's
// functions: the Helm generator's probe (its rehearsal of a chart's
// templates before Helm's engine, which cannot be stopped, renders them)
// and the kustomize generator's opt-in templating both run their
// templates through it.
//
// A Budget accounts one rendering within one set of Limits (Default):
//
//   - Guard wraps every function of a map (Funcs gives the shared base:
//     sprig without env and expandenv, Helm's YAML/JSON/TOML helpers,
//     print*): a call counts steps; key generations and password hashes
//     count their cost (genPrivateKey "rsa" 8, genCA 2, bcrypt 1, ...,
//     at most Limits.Cost); arguments that would make a value over
//     Limits.Value (repeat, until, untilStep, seq, indent, replace,
//     regexReplaceAll, rand*, wrapWith, printf widths) are refused before
//     the call; what the functions return and keep counts against
//     Limits.Work; a dict set or merged into itself is refused.
//   - Instrument marks range bodies and template starts, so that loops
//     and recursion count steps and nesting, and see the context end;
//     Writer bounds what a template file (Output, TotalOutput) or an
//     include or tpl (Value) writes.
//   - Every limit, and the context's end, is one error: ErrBudget (which
//     is generators.ErrBudget), with the first limit hit kept by Err and
//     the range or template that hit it by Where.
//
// Nondeterministic names the functions whose result changes on every
// call; Budget.Called is told each of their calls (the Helm probe
// compares such templates' output with Helm's).
package tmplsandbox
