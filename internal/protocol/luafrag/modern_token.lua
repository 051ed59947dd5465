-- modern_token.lua: the strict check of a modern lock token argument.
-- Needs args.lua before it. Defines, as a local of the including script:
--
--   modern_token(i) -> ARGV[i] when it is a token: 1 to 1024 bytes (any
--     bytes); otherwise an error reply 'ERR lockbridge: bad argument …'.
local function modern_token(i)
  local s = arg_nonempty(i)
  if #s > 1024 then
    arg_bad(i, 'a token of at most 1024 bytes')
  end
  return s
end
