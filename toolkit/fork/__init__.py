"""Keeping a fork of TVM alive: what its own commits change (``status``), whether they still
apply on a newer upstream (``rebase``), which upstream commit breaks them (``upstream``, the
host half of ``tk bisect upstream``) and how a change moves out of tree (``extract``).

The user's repository is only ever read. Everything tk does to a fork - replaying its patches,
checking them out, building, bisecting - happens in tk's own repository for it (``repo``),
under the cache, which borrows the user's objects through git's alternates: refs, index,
working tree, config and objects of the user's repository stay byte for byte as they were.
"""
