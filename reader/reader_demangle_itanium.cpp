/* SPDX-License-Identifier: MIT */
/*
 * reader_demangle_itanium.cpp - LLVM 14's Itanium demangler under a budget.
 *
 * llvm::itaniumDemangle() recurses once per nesting level of the name, keeps
 * every node it makes, and prints the tree with substitutions expanded, so a
 * hostile name overflows the stack ("_Z1fP" + a million 'P' + "i") or makes
 * an output exponential in its length ("_Z1fPFv1AE" + "PFvS1_S1_E" + ...,
 * each step doubling).  This file runs the same parser and the same printer
 * (the templates of ItaniumDemangle.h, instantiated here the way
 * ItaniumDemangle.cpp instantiates them) with three bounds:
 *  - the parser: a Derived class of AbstractManglingParser wraps every
 *    recursive entry point the parser calls through getDerived() with a depth
 *    counter; the one recursion that bypasses getDerived()
 *    (parseTemplateParamDecl on "Tt"/"Tp") is bounded by counting those
 *    pairs in the input first;
 *  - the tree: an allocator that stops handing out nodes past a byte budget;
 *  - the printer: an upper bound of the printed length and of the print
 *    recursion depth, memoized per node of the DAG from its constructor's
 *    arguments (Node::match) and its children's bounds, checked on the root
 *    before printing.  Each node's is computed as the node is made, but for
 *    nodes made after a forward template reference (its target is set
 *    later): one pass from the root computes those.
 * Past any bound the name is refused: rd_itanium_demangle() returns 0 and the
 * caller prints the mangled name.  Within them the output is the one
 * itaniumDemangle() gives, byte for byte.  No global state: everything lives
 * in the parser object on the caller's stack and in the arena blocks it frees.
 */
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include <llvm/Demangle/ItaniumDemangle.h>

#include "reader_demangle.h"

using namespace llvm::itanium_demangle;

namespace {

/* Memo of the print-bound pass, placed in front of every node the arena
 * makes, so the pass needs no table of its own. */
struct NodeMemo {
	uint32_t len;   /* upper bound of the bytes printed, saturated */
	uint32_t depth; /* print recursion levels below and including the node */
	uint32_t pack;  /* largest parameter pack reachable (not under an expansion) */
	uint32_t state; /* 0 unvisited, 1 on the pass's stack, 2 done */
};
static_assert(sizeof(NodeMemo) % alignof(Node) == 0, "nodes stay aligned");

static NodeMemo *memo_of(const Node *n)
{
	return reinterpret_cast<NodeMemo *>(
		const_cast<char *>(reinterpret_cast<const char *>(n)) - sizeof(NodeMemo));
}

/*
 * What one node prints of its own, besides its arguments and children: the
 * sum of the string literals in its class in LLVM 14's ItaniumDemangle.h
 * (each printed at most once per print of the node), rounded up; kinds not
 * listed print at most 3 ("<", " >", "...").  Substitutions print one of
 * their names (the longest, std::string's expansion, is 70 bytes); a
 * floating literal prints at most max_demangled_size (42) bytes.
 */
static constexpr uint32_t own_text(Node::Kind k)
{
	switch (k) {
	case Node::KExpandedSpecialSubstitution: return 80;
	case Node::KFloatLiteral:
	case Node::KDoubleLiteral:
	case Node::KLongDoubleLiteral: return 64;
	case Node::KFunctionType:
	case Node::KFunctionEncoding: return 32;
	case Node::KCtorVtableSpecialName: return 28;
	case Node::KPixelVectorType:
	case Node::KQualType:
	case Node::KSpecialSubstitution: return 26;
	case Node::KTemplateTemplateParamDecl:
	case Node::KNewExpr: return 20;
	case Node::KSubobjectExpr: return 16;
	case Node::KObjCProtoName:
	case Node::KEnableIfAttr:
	case Node::KClosureTypeName:
	case Node::KConditionalExpr: return 13;
	case Node::KLiteralOperator:
	case Node::KSizeofParamPackExpr:
	case Node::KDeleteExpr:
	case Node::KNoexceptSpec:
	case Node::KBinaryExpr: return 11;
	case Node::KConversionOperatorType:
	case Node::KVectorType:
	case Node::KTypeTemplateParamDecl:
	case Node::KUnnamedTypeName:
	case Node::KBoolExpr: return 9;
	case Node::KPointerType:
	case Node::KBracedRangeExpr:
	case Node::KFoldExpr:
	case Node::KLambdaExpr:
	case Node::KSyntheticTemplateParamName: return 8;
	case Node::KAbiTagAttr:
	case Node::KReferenceType:
	case Node::KPointerToMemberType:
	case Node::KDynamicExceptionSpec:
	case Node::KBinaryFPType:
	case Node::KThrowExpr:
	case Node::KParameterPackExpansion:
	case Node::KStdQualifiedName: return 6;
	case Node::KArraySubscriptExpr:
	case Node::KCastExpr:
	case Node::KStringLiteral:
	case Node::KConversionExpr:
	case Node::KPointerToMemberConversionExpr: return 4;
	default: return 3;
	}
}

constexpr uint64_t kNumberText = 21; /* "-" + 20 digits of a 64-bit value */

/*
 * The print-bound pass.  For each node, recursively over its children
 * (memoized in NodeMemo, so a DAG that prints exponentially is still walked
 * in linear time):
 *   len   <= own_text + its string arguments + 21 per integer argument
 *            + 2 per list element (", ") + the len of each child,
 *            a pack expansion counting its child once per pack element;
 *   depth  = 1 + the deepest child.
 * Saturating arithmetic: anything past UINT32_MAX is past every budget.
 */
struct BoundPass {
	uint32_t depth_max;
	uint32_t output_max;
	unsigned level = 0;
	bool over = false;

	static uint32_t sat(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

	/* Accumulates what one node's arguments print. */
	struct Acc {
		BoundPass *pass;
		uint64_t len = 0;
		uint32_t depth = 0;
		uint32_t pack = 0;

		void child(const Node *c)
		{
			if (!c)
				return;
			const NodeMemo *m = pass->walk(c);
			len += m->len;
			if (m->depth > depth)
				depth = m->depth;
			if (m->pack > pack)
				pack = m->pack;
		}
		template <typename T> void arg(const T &a)
		{
			if constexpr (std::is_convertible<T, const Node *>::value) {
				child(a);
			} else if constexpr (std::is_same<T, NodeArray>::value) {
				for (const Node *c : a) {
					len += 2;
					child(c);
				}
			} else if constexpr (std::is_same<T, StringView>::value) {
				len += a.size();
			} else if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
				len += kNumberText;
			}
		}
		template <typename... A> void operator()(const A &...a) { (arg(a), ...); }
	};

	/* The memo of n, computed if needed; sets over when a bound is passed. */
	const NodeMemo *walk(const Node *n)
	{
		NodeMemo *m = memo_of(n);
		if (m->state == 2 || over)
			return m;
		return walk_slow(n, m);
	}

	__attribute__((noinline)) const NodeMemo *walk_slow(const Node *n, NodeMemo *m)
	{
		if (m->state == 1 || level >= depth_max) {
			/* A cycle (a forward template reference reaching itself:
			 * LLVM prints it partly) or too deep: refuse either way. */
			over = true;
			return m;
		}
		level++;
		m->state = 1;
		Acc acc{this};
		acc.len = own_text(n->getKind());
		n->visit([&](const auto *node) { measure(node, acc); });
		done(m, acc);
		level--;
		if (m->len > output_max || m->depth > depth_max)
			over = true;
		return m;
	}

	/*
	 * The memo of a node being made, from its constructor's arguments
	 * and its children's memos, which are all done when no forward
	 * template reference exists yet (a node's fields never change after
	 * construction but a forward reference's Ref), so walk() returns at
	 * once for each: the same values the walk from the root would
	 * compute, without a second pass over the tree.  The bounds are
	 * checked on the root only: len and depth never decrease from a
	 * child to its parent.
	 */
	template <typename T> void birth(const T *node, NodeMemo *m)
	{
		Acc acc{this};
		acc.len = own_text(NodeKind<T>::Kind);
		measure(node, acc);
		done(m, acc);
	}

	/* A node's memo from what its arguments print (acc). */
	static void done(NodeMemo *m, const Acc &acc)
	{
		m->len = sat(acc.len);
		m->depth = acc.depth + 1;
		m->pack = acc.pack;
		m->state = 2;
	}

	/* An expansion prints its child once per element of the first pack it
	 * meets (or once, when it meets none), with ", " between; the packs
	 * below it are used up there, so the expansion passes no pack up. */
	void expand(Acc &acc, const Node *child)
	{
		Acc inner{this};
		inner.child(child);
		uint64_t times = inner.pack ? inner.pack : 1;
		acc.len += times * (inner.len + 2);
		if (inner.depth > acc.depth)
			acc.depth = inner.depth;
	}

	template <typename N> void measure(const N *node, Acc &acc)
	{
		using T = typename std::remove_cv<N>::type;
		if constexpr (std::is_same<T, ForwardTemplateReference>::value) {
			acc.child(node->Ref); /* printed through Ref, set after construction */
		} else if constexpr (std::is_same<T, ParameterPack>::value) {
			/* One element per print: the one at the current pack index. */
			node->match([&](NodeArray data) {
				uint64_t widest = 0;
				for (const Node *c : data) {
					Acc one{this};
					one.child(c);
					if (one.len > widest)
						widest = one.len;
					if (one.depth > acc.depth)
						acc.depth = one.depth;
					if (one.pack > acc.pack)
						acc.pack = one.pack;
				}
				acc.len += widest;
				if (data.size() > acc.pack)
					acc.pack = sat(data.size());
			});
		} else if constexpr (std::is_same<T, ParameterPackExpansion>::value) {
			expand(acc, node->getChild());
		} else if constexpr (std::is_same<T, SizeofParamPackExpr>::value) {
			node->match([&](const Node *pack) { expand(acc, pack); });
		} else if constexpr (std::is_same<T, FoldExpr>::value) {
			node->match([&](bool, StringView op, const Node *pack, const Node *init) {
				acc.len += 2 * op.size(); /* printed twice with an init */
				acc.child(init);
				expand(acc, pack);
			});
		} else {
			node->match([&](const auto &...args) { acc(args...); });
		}
	}
};

/*
 * A bump allocator like LLVM's own (BumpPointerAllocator in
 * ItaniumDemangle.cpp: a first block inside the parser object, then malloc'd
 * blocks), that refuses nodes once arena_max bytes are used.  Node arrays
 * are always granted: the parser writes into them without a check, and
 * their entries are nodes or substitutions already paid for (at most one per
 * input byte), so they cannot outgrow the budget by more than 8 bytes per
 * input byte.
 */
class BudgetArena {
	struct Block {
		Block *next;
		size_t size, used;
	};
	static constexpr size_t kBlock = 64 * 1024;
	static constexpr size_t kHeader = (sizeof(Block) + 15u) & ~size_t(15);
	alignas(16) char first_[4096];
	Block *head_;
	size_t total_ = 0;

	void *take(size_t n)
	{
		n = (n + 15u) & ~size_t(15);
		if (head_->size - head_->used < n) {
			size_t size = n + kHeader > kBlock ? n + kHeader : kBlock;
			void *mem = std::malloc(size);
			if (!mem)
				return nullptr;
			head_ = new (mem) Block{head_, size, kHeader};
		}
		char *p = reinterpret_cast<char *>(head_) + head_->used;
		head_->used += n;
		total_ += n;
		return p;
	}

public:
	size_t arena_max = 0;
	bool refused = false;
	unsigned depth_limit = 0; /* the parser's, 0 once refused */

	void refuse()
	{
		refused = true;
		depth_limit = 0;
	}

	/* Measures nodes as they are made, until the first forward template
	 * reference (whose Ref is set later); rd_itanium_demangle() walks
	 * the rest. */
	BoundPass births{0, 0};
	bool measuring = true;

	BudgetArena() : head_(new (first_) Block{nullptr, sizeof(first_), kHeader}) {}
	~BudgetArena() { reset(); }
	BudgetArena(const BudgetArena &) = delete;
	BudgetArena &operator=(const BudgetArena &) = delete;

	void reset()
	{
		while (head_ && reinterpret_cast<char *>(head_) != first_) {
			Block *next = head_->next;
			std::free(head_);
			head_ = next;
		}
		head_ = new (first_) Block{nullptr, sizeof(first_), kHeader};
		total_ = 0;
		measuring = true;
	}

	template <typename T, typename... Args> T *makeNode(Args &&...args)
	{
		if (refused || total_ + sizeof(NodeMemo) + sizeof(T) > arena_max) {
			refuse();
			return nullptr;
		}
		void *p = take(sizeof(NodeMemo) + sizeof(T));
		if (!p) {
			refuse();
			return nullptr;
		}
		NodeMemo *m = new (p) NodeMemo{0, 0, 0, 0};
		T *node = new (static_cast<char *>(p) + sizeof(NodeMemo)) T(std::forward<Args>(args)...);
		if constexpr (std::is_same<T, ForwardTemplateReference>::value)
			measuring = false;
		else if (measuring)
			births.birth(node, m);
		return node;
	}

	void *allocateNodeArray(size_t n)
	{
		void *p = take(n * sizeof(Node *));
		if (!p)
			std::abort(); /* what LLVM's allocator does (std::terminate) */
		return p;
	}
};

/*
 * The parser: AbstractManglingParser's own methods, with each recursive
 * entry point counted.  Every recursion of the grammar (types in types,
 * names in template arguments, expressions in expressions, encodings in
 * local names) passes through at least one of these, so the stack holds at
 * most depth_max of them plus a bounded number of frames between two.  Once
 * a bound is hit the parse is refused for good (not just this branch), so a
 * parser that backtracks cannot turn a refusal into a different success.
 */
struct BoundedParser : AbstractManglingParser<BoundedParser, BudgetArena> {
	using Base = AbstractManglingParser<BoundedParser, BudgetArena>;
	unsigned depth = 0;

	BoundedParser(const char *first, const char *last, const rd_demangle_limits *lim)
		: Base(first, last)
	{
		ASTAllocator.arena_max = lim->arena_max;
		ASTAllocator.depth_limit = lim->depth_max;
		ASTAllocator.births.depth_max = lim->depth_max;
		ASTAllocator.births.output_max = BoundPass::sat(lim->output_max);
	}

	bool refused() const { return ASTAllocator.refused; }

	/* One level deeper, or refuse the whole parse.  depth_limit is 0 once
	 * anything refused, so one test sees both the depth and a refusal. */
	bool enter()
	{
		if (++depth > ASTAllocator.depth_limit) {
			ASTAllocator.refuse();
			return false;
		}
		return true;
	}

#define RD_COUNTED(call)                                                                         \
	do {                                                                                     \
		if (!enter()) {                                                                  \
			depth--;                                                                 \
			return nullptr;                                                          \
		}                                                                                \
		Node *r_ = call;                                                                 \
		depth--;                                                                         \
		return r_;                                                                       \
	} while (0)

	Node *parseEncoding() { RD_COUNTED(Base::parseEncoding()); }
	Node *parseSpecialName() { RD_COUNTED(Base::parseSpecialName()); }
	Node *parseName(NameState *s = nullptr) { RD_COUNTED(Base::parseName(s)); }
	Node *parseLocalName(NameState *s) { RD_COUNTED(Base::parseLocalName(s)); }
	Node *parseNestedName(NameState *s) { RD_COUNTED(Base::parseNestedName(s)); }
	Node *parseUnscopedName(NameState *s) { RD_COUNTED(Base::parseUnscopedName(s)); }
	Node *parseUnqualifiedName(NameState *s) { RD_COUNTED(Base::parseUnqualifiedName(s)); }
	Node *parseUnnamedTypeName(NameState *s) { RD_COUNTED(Base::parseUnnamedTypeName(s)); }
	Node *parseOperatorName(NameState *s) { RD_COUNTED(Base::parseOperatorName(s)); }
	Node *parseCtorDtorName(Node *&so_far, NameState *s)
	{
		RD_COUNTED(Base::parseCtorDtorName(so_far, s));
	}
	Node *parseTemplateArgs(bool tag = false) { RD_COUNTED(Base::parseTemplateArgs(tag)); }
	Node *parseTemplateArg() { RD_COUNTED(Base::parseTemplateArg()); }
	Node *parseType() { RD_COUNTED(Base::parseType()); }
	Node *parseFunctionType() { RD_COUNTED(Base::parseFunctionType()); }
	Node *parseQualifiedType() { RD_COUNTED(Base::parseQualifiedType()); }
	Node *parseClassEnumType() { RD_COUNTED(Base::parseClassEnumType()); }
	Node *parseArrayType() { RD_COUNTED(Base::parseArrayType()); }
	Node *parseVectorType() { RD_COUNTED(Base::parseVectorType()); }
	Node *parsePointerToMemberType() { RD_COUNTED(Base::parsePointerToMemberType()); }
	Node *parseDecltype() { RD_COUNTED(Base::parseDecltype()); }
	Node *parseExpr() { RD_COUNTED(Base::parseExpr()); }
	Node *parseExprPrimary() { RD_COUNTED(Base::parseExprPrimary()); }
	Node *parsePrefixExpr(StringView k) { RD_COUNTED(Base::parsePrefixExpr(k)); }
	Node *parseBinaryExpr(StringView k) { RD_COUNTED(Base::parseBinaryExpr(k)); }
	Node *parseBracedExpr() { RD_COUNTED(Base::parseBracedExpr()); }
	Node *parseFoldExpr() { RD_COUNTED(Base::parseFoldExpr()); }
	Node *parseNewExpr() { RD_COUNTED(Base::parseNewExpr()); }
	Node *parseConversionExpr() { RD_COUNTED(Base::parseConversionExpr()); }
	Node *parseUnresolvedName() { RD_COUNTED(Base::parseUnresolvedName()); }
	Node *parseBaseUnresolvedName() { RD_COUNTED(Base::parseBaseUnresolvedName()); }
	Node *parseUnresolvedType() { RD_COUNTED(Base::parseUnresolvedType()); }
	Node *parseSimpleId() { RD_COUNTED(Base::parseSimpleId()); }
	Node *parseDestructorName() { RD_COUNTED(Base::parseDestructorName()); }
#undef RD_COUNTED
};

} // namespace

/* Two pairs "Tt"/"Tp" never overlap (the second byte of one is not 'T'), so
 * a name of len bytes has at most len / 2 of them: only names longer than
 * 2 * max + 1 bytes need counting. */
extern "C" int rd_itanium_param_decls_over(const char *s, size_t len, size_t max)
{
	if (len / 2 <= max)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i + 1 < len; i++)
		if (s[i] == 'T' && (s[i + 1] == 't' || s[i + 1] == 'p'))
			n++;
	return n > max;
}

extern "C" int rd_itanium_demangle(const char *name, size_t len, char **buf, size_t *cap,
				   const struct rd_demangle_limits *lim)
{
	if (len > lim->input_max || rd_itanium_param_decls_over(name, len, lim->depth_max))
		return 0;
	BoundedParser parser(name, name + len, lim);
	Node *ast = parser.parse();
	if (!ast || parser.refused() || !parser.ForwardTemplateRefs.empty())
		return 0;
	/* Nodes made before any forward reference are measured already; the
	 * walk measures the others.  births.over cannot be set (every child
	 * of a node being made is done), but is honoured all the same. */
	BoundPass pass{lim->depth_max, BoundPass::sat(lim->output_max)};
	const NodeMemo *root = pass.walk(ast);
	if (pass.over || parser.ASTAllocator.births.over || root->len > pass.output_max ||
	    root->depth > pass.depth_max)
		return 0;
	/* As itaniumDemangle() prints: LLVM's printer into the caller's
	 * buffer, which OutputBuffer reallocs as it grows. */
	OutputBuffer ob(*buf, *cap);
	ast->print(ob);
	ob += '\0';
	*buf = ob.getBuffer();
	*cap = ob.getBufferCapacity();
	return 1;
}
