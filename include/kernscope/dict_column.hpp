// A column of few distinct values, dictionary-encoded: each row holds a 2-byte code into the
// column's distinct values. Thread and process ids, graph node ids: a 300 MB export's 4.1 M API
// calls come from a dozen threads, so their 8-byte thread ids were 33 MB of the trace where the
// codes take 8. Reads give the value (operator[] returns T, not a reference); a column that meets
// more than 65,536 distinct values stores them plainly from then on, so no input is refused.
// The interface is the part of std::vector the model's generic code uses (columns.hpp, the readers'
// column lists), so a column can change between the two without touching the code that reads it;
// code that writes rows in place calls set(i, value), and insert() appends (its position is the
// end wherever the model inserts).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace kernscope {

template <class T>
class DictColumn {
 public:
  using value_type = T;
  using size_type = std::size_t;

  // Values by position: a random-access iterator that yields copies.
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = T;
    const_iterator() = default;
    const_iterator(const DictColumn* column, std::size_t i) : column_(column), i_(i) {}
    T operator*() const { return (*column_)[i_]; }
    T operator[](difference_type n) const { return (*column_)[i_ + n]; }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { auto old = *this; ++i_; return old; }
    const_iterator& operator--() { --i_; return *this; }
    const_iterator operator--(int) { auto old = *this; --i_; return old; }
    const_iterator& operator+=(difference_type n) { i_ += n; return *this; }
    const_iterator& operator-=(difference_type n) { i_ -= n; return *this; }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.i_ <=> b.i_; }

   private:
    const DictColumn* column_ = nullptr;
    std::size_t i_ = 0;
  };
  using iterator = const_iterator;

  DictColumn() = default;
  DictColumn(const DictColumn&) = default;
  DictColumn& operator=(const DictColumn&) = default;
  // A moved-from column is empty and usable (the defaults would leave its last-value cache and mode
  // behind, naming codes of a dictionary it no longer has).
  DictColumn(DictColumn&& other) noexcept { swap(other); }
  DictColumn& operator=(DictColumn&& other) noexcept {
    if (this != &other) {
      DictColumn taken;
      taken.swap(other);
      swap(taken);
    }
    return *this;
  }
  DictColumn(std::size_t n, T value) { resize(n, value); }
  DictColumn(std::initializer_list<T> values) { for (T v : values) push_back(v); }

  std::size_t size() const { return plain_mode_ ? plain_.size() : codes_.size(); }
  bool empty() const { return size() == 0; }
  // Inlined always: analyses read columns in their hottest loops, where GCC left it a call.
  [[gnu::always_inline]] T operator[](std::size_t i) const { return plain_mode_ ? plain_[i] : values_[codes_[i]]; }
  T front() const { return (*this)[0]; }
  T back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }
  // The distinct values met (every row's value is one of them; some may no longer be used).
  // Plain mode (more than kMaxCodes values): empty.
  const std::vector<T>& distinct_values() const { return values_; }

  void reserve(std::size_t n) { plain_mode_ ? plain_.reserve(n) : codes_.reserve(n); }
  std::size_t capacity() const { return plain_mode_ ? plain_.capacity() : codes_.capacity(); }
  // Bytes held by the rows (codes or plain values) and the dictionary.
  std::size_t bytes() const {
    return codes_.capacity() * sizeof(Code) + plain_.capacity() * sizeof(T) + values_.capacity() * sizeof(T) +
           slots_.capacity() * sizeof(std::uint32_t);
  }
  // The common case inline (a value equal to the last one coded: a thread's run of calls, one
  // device's kernels); the others through code_of.
  [[gnu::always_inline]] void push_back(T value) {
    if (have_last_ && value == last_value_) {
      codes_.push_back(last_code_);
      return;
    }
    push_back_new(value);
  }
  void emplace_back(T value = T{}) { push_back(value); }
  void resize(std::size_t n, T value = T{}) {
    if (n <= size()) {
      plain_mode_ ? plain_.resize(n) : codes_.resize(n);
      return;
    }
    if (Code code; coded(value, code)) codes_.resize(n, code);
    else plain_.resize(n, value);
  }
  void assign(std::size_t n, T value) {
    clear();
    resize(n, value);
  }
  // Sets row i's value (a read returns a copy, so writes go through here).
  void set(std::size_t i, T value) {
    if (Code code; coded(value, code)) codes_[i] = code;
    else plain_[i] = value;
  }
  // Appends [first, last) at the end (the only position the model's generic code inserts at).
  template <class It>
  void insert(const_iterator at, It first, It last) {
    (void)at;
    for (; first != last; ++first) push_back(static_cast<T>(*first));
  }
  void clear() { DictColumn().swap(*this); }
  void shrink_to_fit() {
    codes_.shrink_to_fit();
    plain_.shrink_to_fit();
  }
  void swap(DictColumn& other) noexcept {
    codes_.swap(other.codes_);
    plain_.swap(other.plain_);
    values_.swap(other.values_);
    slots_.swap(other.slots_);
    std::swap(last_value_, other.last_value_);
    std::swap(last_code_, other.last_code_);
    std::swap(have_last_, other.have_last_);
    std::swap(plain_mode_, other.plain_mode_);
  }
  friend bool operator==(const DictColumn& a, const DictColumn& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  // The rows as a plain vector (for callers that need contiguous values: Python's arrays).
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  static constexpr std::size_t kMaxCodes = std::size_t{1} << 16;

 private:
  using Code = std::uint16_t;
  static constexpr std::size_t kNoCode = SIZE_MAX;

  [[gnu::noinline]] void push_back_new(T value) {
    if (Code code; coded(value, code)) codes_.push_back(code);
    else plain_.push_back(value);
  }
  // The value's code in `code`, true; false where the column stores values plainly, turning plain
  // first where the dictionary is full.
  bool coded(T value, Code& code) {
    if (plain_mode_) return false;
    if (const std::size_t c = code_of(value); c != kNoCode) {
      code = static_cast<Code>(c);
      return true;
    }
    to_plain();
    return false;
  }
  // The value's code, adding it to the dictionary when new; kNoCode when the dictionary is full.
  // Found through an open-addressing table of codes (slots_: code + 1, 0 when empty) at most half
  // full, hashed by Fibonacci multiplication: a few instructions where std::unordered_map took ~60
  // a row on the 4.1 M API calls' names.
  std::size_t code_of(T value) {
    if (have_last_ && value == last_value_) return last_code_;
    if (slots_.empty()) rehash(64);
    std::size_t h = slot_of(value);
    for (; slots_[h] != 0; h = (h + 1) & (slots_.size() - 1)) {
      const std::size_t code = slots_[h] - 1;
      if (values_[code] == value) return remember(value, code);
    }
    if (values_.size() == kMaxCodes) return kNoCode;
    values_.push_back(value);
    slots_[h] = static_cast<std::uint32_t>(values_.size());
    if (values_.size() * 2 > slots_.size()) rehash(slots_.size() * 2);
    return remember(value, values_.size() - 1);
  }
  std::size_t remember(T value, std::size_t code) {
    have_last_ = true;
    last_value_ = value;
    last_code_ = static_cast<Code>(code);
    return code;
  }
  std::size_t slot_of(T value) const {
    const auto bits = static_cast<unsigned>(std::countr_zero(slots_.size()));
    return static_cast<std::size_t>((static_cast<std::uint64_t>(value) * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
  }
  void rehash(std::size_t size) {
    slots_.assign(size, 0);
    for (std::size_t code = 0; code < values_.size(); ++code) {
      std::size_t h = slot_of(values_[code]);
      while (slots_[h] != 0) h = (h + 1) & (size - 1);
      slots_[h] = static_cast<std::uint32_t>(code + 1);
    }
  }
  void to_plain() {
    plain_.reserve(std::max(codes_.capacity(), codes_.size() + 1));
    for (Code c : codes_) plain_.push_back(values_[c]);
    std::vector<Code>().swap(codes_);
    std::vector<T>().swap(values_);
    std::vector<std::uint32_t>().swap(slots_);
    have_last_ = false;
    plain_mode_ = true;
  }

  std::vector<Code> codes_;
  std::vector<T> values_;             // code -> value
  std::vector<std::uint32_t> slots_;  // value -> code + 1 (open addressing, power-of-two size)
  std::vector<T> plain_;              // the rows, once there are too many values to code
  T last_value_{};                    // the value coded last, and its code (have_last_)
  Code last_code_ = 0;
  bool have_last_ = false;
  bool plain_mode_ = false;
};

}  // namespace kernscope
