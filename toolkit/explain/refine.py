"""What a rule's ``refine`` (:class:`toolkit.explain.rules.Rule`) may return: ``(cause, fix)``;
None, to keep the rule's own words; or ``NOT_THIS`` when the text its pattern matched is not its
failure after all (a compile error in the user's own file, not TVM's), and no finding is made.
The modules whose functions refine rules import it from here, below the rule table that
imports them."""

NOT_THIS = ("", "")
